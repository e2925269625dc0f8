/** Index uid rules and the bodies of the index routes. */
import { ApiError } from '../errors/api-error';

export function isValidIndexUid(uid: string): boolean {
  return /^[A-Za-z0-9_-]{1,400}$/.test(uid);
}

export function invalidIndexUidMessage(uid: string): string {
  return `\`${uid}\` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.`;
}

export function checkIndexUid(uid: unknown, code = 'invalid_index_uid'): string {
  if (typeof uid !== 'string' || !isValidIndexUid(uid)) {
    throw new ApiError(code, invalidIndexUidMessage(String(uid)));
  }
  return uid;
}
