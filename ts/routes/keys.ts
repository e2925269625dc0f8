/**
 * `/keys`: the master key, or a key holding the matching `keys.*` action (`*` included, as
 * in Meilisearch: the default admin key manages keys). Without a master key these routes
 * answer `missing_master_key` (the guard does it).
 */
import { Router } from 'express';
import { z } from 'zod';
import { ACTIONS, isIndexPattern } from '../auth/actions';
import { createKey, deleteKey, findKey, updateKey } from '../commands/keys';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import { readJson } from '../http/body';
import {
  boundedList,
  boundedString,
  MAX_KEY_ACTIONS,
  MAX_KEY_DESCRIPTION,
  MAX_KEY_INDEXES,
  MAX_KEY_NAME,
} from '../schemas/limits';
import { rejectUnknownParams, uintParam } from '../schemas/query';

export const CreateSchema = z.strictObject({
  description: boundedString(MAX_KEY_DESCRIPTION).nullable().optional(),
  name: boundedString(MAX_KEY_NAME).nullable().optional(),
  uid: z.string().uuid().optional(),
  actions: boundedList(z.enum(ACTIONS), MAX_KEY_ACTIONS),
  indexes: boundedList(z.string().refine(isIndexPattern, 'not a valid index uid pattern'), MAX_KEY_INDEXES),
  // Its date is read where the body lists it (deserr stops at the first bad field in order).
  expiresAt: z
    .string()
    .nullable()
    .superRefine((text, ctx) => {
      if (text === null) return;
      const at = parseExpiresAt(text);
      if (at !== null && Date.parse(at) > Date.now()) return;
      // Meilisearch's message ends with a line break.
      ctx.addIssue({
        code: 'custom',
        message: `\`${text}\` is not a valid date. It should follow the RFC 3339 format to represents a date or datetime in the future or specified as a null value. e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.\n`,
      });
    }),
});
const CREATE_CODES = {
  uid: 'invalid_api_key_uid',
  name: 'invalid_api_key_name',
  description: 'invalid_api_key_description',
  actions: 'invalid_api_key_actions',
  indexes: 'invalid_api_key_indexes',
  expiresAt: 'invalid_api_key_expires_at',
};
export const UpdateSchema = z.strictObject({
  description: boundedString(MAX_KEY_DESCRIPTION).nullable().optional(),
  name: boundedString(MAX_KEY_NAME).nullable().optional(),
});
const IMMUTABLE = ['uid', 'actions', 'indexes', 'expiresAt', 'createdAt', 'updatedAt'];

/**
 * RFC 3339, `YYYY-MM-DDTHH:MM:SS`, `YYYY-MM-DD HH:MM:SS` (UTC) or `YYYY-MM-DD`. Kept as given,
 * as Meilisearch keeps it: the offset and the fraction of a second stay (trailing zeros of the
 * fraction aside); a date alone or a time without offset is UTC (`Z`).
 */
function parseExpiresAt(text: string): string | null {
  let iso = text;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) iso = `${text}T00:00:00Z`;
  else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(text)) iso = `${text.replace(' ', 'T')}Z`;
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(iso);
  if (!m || Number.isNaN(Date.parse(iso))) return null;
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  return `${m[1]}${fraction === '.' ? '' : fraction}${m[3]}`;
}

export function keyRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, keys } = deps;

  r.get('/keys', guard('keys.get'), (req, res) => {
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['offset', 'limit']);
    const offset = uintParam(q, 'offset', 'invalid_api_key_offset', 0);
    const limit = uintParam(q, 'limit', 'invalid_api_key_limit', 20);
    const all = keys.list();
    res.json({ results: all.slice(offset, offset + limit).map((k) => keys.view(k)), offset, limit, total: all.length });
  });

  r.get('/keys/:key', guard('keys.get'), (req, res) => {
    res.json(keys.view(findKey(deps, String(req.params.key))));
  });

  r.post('/keys', guard('keys.create'), async (req, res) => {
    const raw = readJson(req);
    // deserr reads the fields that are there (an expiry in the past is refused as it is read),
    // then names a missing one.
    const present = parseWith(CreateSchema.partial(), raw, CREATE_CODES);
    const expiresAt = typeof present.expiresAt === 'string' ? parseExpiresAt(present.expiresAt) : null;
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      for (const f of ['actions', 'indexes', 'expiresAt']) {
        if (!(f in raw))
          throw new ApiError(`missing_api_key_${f === 'expiresAt' ? 'expires_at' : f}`, `Missing field \`${f}\``);
      }
    }
    const body = parseWith(CreateSchema, raw, CREATE_CODES);
    const record = await createKey(deps, { ...body, expiresAt });
    res.status(201).json(keys.view(record));
  });

  r.patch('/keys/:key', guard('keys.update'), async (req, res) => {
    // The body is read first, as Meilisearch reads it: its first bad field in order, then the key.
    const raw = readJson(req);
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      for (const f of Object.keys(raw)) {
        if (IMMUTABLE.includes(f))
          throw new ApiError(
            `immutable_api_key_${f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`,
            `Immutable field \`${f}\`: expected one of \`description\`, \`name\``,
          );
        if (!Object.hasOwn(UpdateSchema.shape, f)) break;
      }
    }
    const body = parseWith(UpdateSchema, raw, {
      name: 'invalid_api_key_name',
      description: 'invalid_api_key_description',
    });
    res.json(keys.view(await updateKey(deps, String(req.params.key), body)));
  });

  r.delete('/keys/:key', guard('keys.delete'), async (req, res) => {
    await deleteKey(deps, String(req.params.key));
    res.status(204).end();
  });

  return r;
}
