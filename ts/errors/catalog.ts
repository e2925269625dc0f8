/** Status and type of each code, read once from the Rust error table. */
import { catalogByCode } from '../native';
import { type ErrorBody, shortMessage } from './api-error';

export function statusOf(code: string): number {
  return catalogByCode().get(code)?.status ?? 500;
}

export function typeOf(code: string): string {
  return catalogByCode().get(code)?.errorType ?? 'internal';
}

export function errorBody(code: string, message: string): ErrorBody {
  return {
    message: shortMessage(message),
    code,
    type: typeOf(code),
    link: (catalogByCode().get(code) ?? catalogByCode().get('internal')!).link,
  };
}
