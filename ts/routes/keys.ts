/** `/keys`: only the master key may manage keys. */
import { randomUUID } from 'node:crypto';
import { type Request, Router } from 'express';
import { z } from 'zod';
import { ACTIONS, GLOBAL_ACTIONS } from '../auth/actions';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import { readJson } from '../http/body';
import { rejectUnknownParams, uintParam } from '../schemas/query';
import { nowIso } from '../util/time';

const CreateSchema = z.strictObject({
  uid: z.string().uuid().optional(),
  name: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  actions: z.array(z.enum(ACTIONS)),
  indexes: z.array(z.string().regex(/^(\*|[A-Za-z0-9_-]+\*?)$/)),
  expiresAt: z.string().nullable(),
});
const CREATE_CODES = {
  uid: 'invalid_api_key_uid',
  name: 'invalid_api_key_name',
  description: 'invalid_api_key_description',
  actions: 'invalid_api_key_actions',
  indexes: 'invalid_api_key_indexes',
  expiresAt: 'invalid_api_key_expires_at',
};
const UpdateSchema = z.strictObject({
  name: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
});
const IMMUTABLE = ['uid', 'actions', 'indexes', 'expiresAt', 'createdAt', 'updatedAt'];

/** RFC 3339, `YYYY-MM-DDTHH:MM:SS`, `YYYY-MM-DD HH:MM:SS` (UTC) or `YYYY-MM-DD`. */
function parseExpiresAt(text: string): string | null {
  let iso = text;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) iso = `${text}T00:00:00Z`;
  else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(text)) iso = `${text.replace(' ', 'T')}Z`;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(iso)) return null;
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function requireMaster(deps: Deps, req: Request): void {
  if (deps.config.masterKey === null) {
    throw new ApiError(
      'missing_master_key',
      'Meilisearch is running without a master key. To access this API endpoint, you must have set a master key at launch.',
    );
  }
  if (!req.auth!.master) throw new ApiError('invalid_api_key', 'The provided API key is invalid.');
}

export function keyRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, keys } = deps;
  const master = (action: string) => [
    (req: Request, _res: unknown, next: () => void) => {
      if (deps.config.masterKey === null) requireMaster(deps, req);
      next();
    },
    guard(action),
  ];

  const find = (uidOrKey: string) => {
    const k = keys.find(uidOrKey);
    if (!k) throw new ApiError('api_key_not_found', `API key \`${uidOrKey}\` not found.`);
    return k;
  };

  r.get('/keys', ...master('keys.get'), (req, res) => {
    requireMaster(deps, req);
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['offset', 'limit']);
    const offset = uintParam(q, 'offset', 'invalid_api_key_offset', 0);
    const limit = uintParam(q, 'limit', 'invalid_api_key_limit', 20);
    const all = keys.list();
    res.json({ results: all.slice(offset, offset + limit).map((k) => keys.view(k)), offset, limit, total: all.length });
  });

  r.get('/keys/:key', ...master('keys.get'), (req, res) => {
    requireMaster(deps, req);
    res.json(keys.view(find(String(req.params.key))));
  });

  r.post('/keys', ...master('keys.create'), async (req, res) => {
    requireMaster(deps, req);
    const raw = readJson(req);
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      for (const f of ['actions', 'indexes', 'expiresAt']) {
        if (!(f in raw)) throw new ApiError(`missing_api_key_${f === 'expiresAt' ? 'expires_at' : f}`, `Missing field \`${f}\``);
      }
    }
    const body = parseWith(CreateSchema, raw, CREATE_CODES);
    let expiresAt: string | null = null;
    if (body.expiresAt !== null) {
      expiresAt = parseExpiresAt(body.expiresAt);
      if (expiresAt === null || Date.parse(expiresAt) <= Date.now()) {
        throw new ApiError(
          'invalid_api_key_expires_at',
          `Invalid value at \`.expiresAt\`: \`${body.expiresAt}\` is not a valid date. It should follow the RFC 3339 format to represents a date or datetime in the future or specified as a null value. e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.`,
        );
      }
    }
    if (!body.indexes.includes('*') && body.actions.some((a) => GLOBAL_ACTIONS.has(a))) {
      const a = body.actions.find((x) => GLOBAL_ACTIONS.has(x));
      throw new ApiError('index_scoped_api_key_with_global_action', `The \`${a}\` action is global and cannot be given to an API key restricted to some indexes.`);
    }
    const uid = body.uid ?? randomUUID();
    if (keys.get(uid)) throw new ApiError('api_key_already_exists', `\`uid\` field value \`${uid}\` is already an existing API key.`);
    const now = nowIso();
    const record = { uid, name: body.name ?? null, description: body.description ?? null, actions: body.actions, indexes: body.indexes, expiresAt, createdAt: now, updatedAt: now };
    await keys.put([record]);
    res.status(201).json(keys.view(record));
  });

  r.patch('/keys/:key', ...master('keys.update'), async (req, res) => {
    requireMaster(deps, req);
    const k = find(String(req.params.key));
    const raw = readJson(req);
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      for (const f of IMMUTABLE) {
        if (f in raw) throw new ApiError(`immutable_api_key_${f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`, `Immutable field \`${f}\`: expected one of \`description\`, \`name\``);
      }
    }
    const body = parseWith(UpdateSchema, raw, { name: 'invalid_api_key_name', description: 'invalid_api_key_description' });
    const updated = { ...k, updatedAt: nowIso() };
    if (body.name !== undefined) updated.name = body.name;
    if (body.description !== undefined) updated.description = body.description;
    await keys.put([updated]);
    res.json(keys.view(updated));
  });

  r.delete('/keys/:key', ...master('keys.delete'), async (req, res) => {
    requireMaster(deps, req);
    await keys.delete(find(String(req.params.key)).uid);
    res.status(204).end();
  });

  return r;
}
