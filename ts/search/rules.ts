/**
 * Dynamic search rules (the `dynamicSearchRules` experimental feature): rules that pin
 * documents at positions of the results when a search's query matches their conditions.
 *
 * A rule is `{uid, description?, precedence?, active, conditions: {query?: {words?,
 * isEmpty?}, time?: {start?, end?}, filter?: {values?}}, actions: [{selector: {indexUid?, id},
 * action: {type: "pin", position}}]}`, stored in the `searchRules` database. Updates are tasks (`dsrUpdate`,
 * `dsrClear`, on the pseudo-index `.meili_dsr` as Meilisearch names it). At search time
 * `pinsFor` lists, in precedence order, the documents the matching rules pin in the searched
 * index; the engine takes them out of the natural order and places them (see
 * `Index::search_result`).
 */
import { ApiError } from '../errors/api-error';
import type { KvOp } from '../native';
import { ruleFiltersMatch } from '../native/documents';
import { checkIndexUid, isValidIndexUid } from '../schemas/indexes';
import {
  arrayOf,
  boolean,
  DeserrError,
  incorrectType,
  invalidValue,
  isObject,
  type Loc,
  nullable,
  type Parser,
  string,
  u64,
  unknownField,
} from '../settings/deserr';
import type { Durable } from '../store/durable';
import { jsonValue } from '../store/durable';

/** The pseudo-index the rules' tasks are recorded on. */
export const RULES_INDEX = '.meili_dsr';
const DB = 'searchRules';

export interface PinAction {
  selector: { indexUid?: string | null; id: string };
  action: { type: 'pin'; position: number };
}

export interface RuleConditions {
  query?: { words?: string | null; isEmpty?: boolean | null } | null;
  time?: { start?: string | null; end?: string | null } | null;
  /** Matches a search whose filter asks for these values (see the engine's `rule_condition`). */
  filter?: { values?: Record<string, unknown> | null } | null;
}

export interface SearchRule {
  uid: string;
  description?: string;
  lastUpdatedAt: string;
  precedence?: number;
  active: boolean;
  conditions: RuleConditions;
  actions: PinAction[];
}

/** A `PATCH /dynamic-search-rules/{uid}` body: given fields replace, `null` removes. */
export type RulePatch = Partial<{
  description: string | null;
  precedence: number | null;
  active: boolean | null;
  conditions: RuleConditions | null;
  actions: PinAction[] | null;
}>;

/** One document to pin, for the engine: `position` is where the rule wants it. */
export interface Pin {
  id: string;
  position: number;
}

const PATCH_FIELDS = ['description', 'precedence', 'active', 'conditions', 'actions'];
const LIST_FIELDS = ['offset', 'limit', 'filter'];

function fail(code: string, err: unknown): never {
  if (err instanceof DeserrError) throw new ApiError(code, err.message);
  throw err;
}

function strictObject(value: unknown, fields: readonly string[], loc: Loc): Record<string, unknown> {
  if (!isObject(value)) throw incorrectType(value, ['object'], loc);
  for (const k of Object.keys(value)) if (!fields.includes(k)) throw unknownField(k, fields, loc);
  return value;
}

/** An RFC 3339 date (or `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS`), as Meilisearch's message says. */
const date: Parser<string> = (value, loc) => {
  const text = string(value, loc);
  if (
    !/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text) ||
    Number.isNaN(Date.parse(text))
  ) {
    throw invalidValue(
      `\`${text}\` is not a valid date. It should follow the RFC 3339 format to represents a date or datetime in the future or specified as a null value. e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.\n`,
      loc,
    );
  }
  return text;
};

const conditions: Parser<RuleConditions> = (value, loc) => {
  const o = strictObject(value, ['time', 'query', 'filter'], loc);
  const out: RuleConditions = {};
  if (o.time !== undefined) {
    out.time = nullable((v, l) => {
      const t = strictObject(v, ['start', 'end'], l);
      const time: NonNullable<RuleConditions['time']> = {};
      if (t.start !== undefined) time.start = nullable(date)(t.start, [...l, 'start']);
      if (t.end !== undefined) time.end = nullable(date)(t.end, [...l, 'end']);
      return time;
    })(o.time, [...loc, 'time']);
  }
  if (o.query !== undefined) {
    out.query = nullable((v, l) => {
      const q = strictObject(v, ['isEmpty', 'words'], l);
      const query: NonNullable<RuleConditions['query']> = {};
      if (q.isEmpty !== undefined) query.isEmpty = nullable(boolean)(q.isEmpty, [...l, 'isEmpty']);
      if (q.words !== undefined) query.words = nullable(string)(q.words, [...l, 'words']);
      return query;
    })(o.query, [...loc, 'query']);
  }
  if (o.filter !== undefined) {
    out.filter = nullable((v, l) => {
      const f = strictObject(v, ['values'], l);
      const filter: NonNullable<RuleConditions['filter']> = {};
      if (f.values !== undefined)
        filter.values = nullable((vs, vl) => {
          if (!isObject(vs)) throw incorrectType(vs, ['object'], vl);
          return vs;
        })(f.values, [...l, 'values']);
      return filter;
    })(o.filter, [...loc, 'filter']);
  }
  return out;
};

const action: Parser<PinAction> = (value, loc) => {
  const o = strictObject(value, ['selector', 'action'], loc);
  const s = strictObject(o.selector, ['indexUid', 'id'], [...loc, 'selector']);
  const selector: PinAction['selector'] = { id: string(s.id, [...loc, 'selector', 'id']) };
  if (s.indexUid !== undefined && s.indexUid !== null) {
    const uid = string(s.indexUid, [...loc, 'selector', 'indexUid']);
    if (!isValidIndexUid(uid)) {
      throw invalidValue(
        `\`${uid}\` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.`,
        [...loc, 'selector', 'indexUid'],
      );
    }
    selector.indexUid = uid;
  }
  const a = o.action;
  if (!isObject(a)) throw incorrectType(a, ['object'], [...loc, 'action']);
  if (a.type !== 'pin') throw invalidValue('Incorrect tag value', [...loc, 'action']);
  for (const k of Object.keys(a))
    if (k !== 'type' && k !== 'position') throw unknownField(k, ['type', 'position'], [...loc, 'action']);
  return { selector, action: { type: 'pin', position: u64(a.position, [...loc, 'action', 'position']) } };
};

/** Validates a rule patch with Meilisearch's codes and messages. */
export function parseRulePatch(body: unknown): RulePatch {
  if (!isObject(body)) throw new ApiError('bad_request', incorrectType(body, ['object'], []).message);
  for (const k of Object.keys(body))
    if (!PATCH_FIELDS.includes(k)) throw new ApiError('bad_request', unknownField(k, PATCH_FIELDS, []).message);
  const patch: RulePatch = {};
  const field = <T>(key: keyof RulePatch, code: string, parse: Parser<T>) => {
    if (body[key] === undefined) return;
    try {
      (patch as Record<string, unknown>)[key] = nullable(parse)(body[key], [key]);
    } catch (err) {
      fail(code, err);
    }
  };
  field('description', 'invalid_dynamic_search_rule_description', string);
  field('precedence', 'invalid_dynamic_search_rule_priority', u64);
  field('active', 'invalid_dynamic_search_rule_active', boolean);
  field('conditions', 'invalid_dynamic_search_rule_conditions', conditions);
  field('actions', 'invalid_dynamic_search_rule_actions', arrayOf(action));
  return patch;
}

/** The uid of a rule in a path: the index uid rules. */
export function checkRuleUid(uid: unknown): string {
  return checkIndexUid(uid, 'bad_request');
}

export interface RuleList {
  offset: number;
  limit: number;
  query: string | null;
  active: boolean | null;
}

/** `POST /dynamic-search-rules`: `{offset, limit, filter: {query, active}}`. */
export function parseRuleList(body: unknown): RuleList {
  if (!isObject(body)) throw new ApiError('bad_request', incorrectType(body, ['object'], []).message);
  for (const k of Object.keys(body))
    if (!LIST_FIELDS.includes(k)) throw new ApiError('bad_request', unknownField(k, LIST_FIELDS, []).message);
  const out: RuleList = { offset: 0, limit: 20, query: null, active: null };
  try {
    if (body.offset !== undefined) out.offset = u64(body.offset, ['offset']);
  } catch (err) {
    fail('invalid_dynamic_search_rule_offset', err);
  }
  try {
    if (body.limit !== undefined) out.limit = u64(body.limit, ['limit']);
  } catch (err) {
    fail('invalid_dynamic_search_rule_limit', err);
  }
  if (body.filter !== undefined && body.filter !== null) {
    let f: Record<string, unknown>;
    try {
      f = strictObject(body.filter, ['query', 'active'], ['filter']);
    } catch (err) {
      fail('invalid_dynamic_search_rule_filter', err);
    }
    try {
      if (f.query !== undefined) out.query = nullable(string)(f.query, ['filter', 'query']);
    } catch (err) {
      fail('invalid_dynamic_search_rule_filter_query', err);
    }
    try {
      if (f.active !== undefined) out.active = nullable(boolean)(f.active, ['filter', 'active']);
    } catch (err) {
      fail('invalid_dynamic_search_rule_filter_active', err);
    }
  }
  return out;
}

/** Lowercased words, as rule conditions and list filters compare them. */
function words(text: string | null | undefined): string[] {
  return (text ?? '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/**
 * Whether `rule` applies to a search with `q` at `now`, its filter condition aside (see
 * `pinsFor`).
 */
function ruleMatchesQuery(rule: SearchRule, q: string, now: number): boolean {
  if (!rule.active) return false;
  const time = rule.conditions.time;
  if (time?.start && now < Date.parse(time.start)) return false;
  if (time?.end && now > Date.parse(time.end)) return false;
  const query = rule.conditions.query;
  if (query?.isEmpty === true && q.trim() !== '') return false;
  if (query?.isEmpty === false && q.trim() === '') return false;
  if (query?.words) {
    const have = new Set(words(q));
    if (!words(query.words).every((w) => have.has(w))) return false;
  }
  return true;
}

export class SearchRules {
  readonly #rules = new Map<string, SearchRule>();

  constructor(durable: Durable) {
    for (const { value } of durable.kv.scan(DB)) {
      const r = JSON.parse(value.toString()) as SearchRule;
      this.#rules.set(r.uid, r);
    }
  }

  get(uid: string): SearchRule | undefined {
    return this.#rules.get(uid);
  }

  all(): SearchRule[] {
    return [...this.#rules.values()];
  }

  /** The page of rules the list asks for, most recently updated first. */
  list(l: RuleList): { results: SearchRule[]; offset: number; limit: number; total: number } {
    const wanted = words(l.query);
    const found = this.all()
      .filter((r) => l.active === null || r.active === l.active)
      .filter((r) => {
        if (!wanted.length) return true;
        const have = new Set([...words(r.description), ...words(r.conditions.query?.words)]);
        return wanted.every((w) => have.has(w));
      })
      .sort((a, b) =>
        a.lastUpdatedAt === b.lastUpdatedAt ? (a.uid < b.uid ? -1 : 1) : a.lastUpdatedAt < b.lastUpdatedAt ? 1 : -1,
      );
    return {
      results: found.slice(l.offset, l.offset + l.limit),
      offset: l.offset,
      limit: l.limit,
      total: found.length,
    };
  }

  /**
   * The documents the rules matching `q` and `filter` pin in index `indexUid`, in the order
   * they are placed: by precedence (smaller first, none last), then uid; a rule's actions by
   * position (as Meilisearch places them).
   */
  pinsFor(indexUid: string, q: string, filter: unknown, now = Date.now()): Pin[] {
    if (this.#rules.size === 0) return [];
    const byQuery = this.all().filter((r) => ruleMatchesQuery(r, q, now));
    // The filter conditions of the rules left, in one call: the search's filter parsed once.
    const conditions: Array<[SearchRule, Record<string, unknown>]> = [];
    for (const r of byQuery) {
      const values = r.conditions.filter?.values;
      if (values) conditions.push([r, values]);
    }
    const met = conditions.length
      ? ruleFiltersMatch(
          filter,
          conditions.map(([, values]) => values),
        )
      : [];
    const failed = new Set(conditions.filter((_, i) => !met[i]).map(([r]) => r));
    const rules = byQuery
      .filter((r) => !failed.has(r))
      .sort(
        (a, b) =>
          (a.precedence ?? Infinity) - (b.precedence ?? Infinity) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0),
      );
    const pins: Pin[] = [];
    for (const r of rules) {
      for (const a of [...r.actions].sort((x, y) => x.action.position - y.action.position)) {
        if (a.selector.indexUid && a.selector.indexUid !== indexUid) continue;
        pins.push({ id: a.selector.id, position: a.action.position });
      }
    }
    return pins;
  }

  /** The rule after `patch` (a new one when `uid` has none), stamped `at`. */
  patched(uid: string, patch: RulePatch, at: string): SearchRule {
    const base: SearchRule = this.#rules.get(uid) ?? {
      uid,
      lastUpdatedAt: at,
      active: true,
      conditions: {},
      actions: [],
    };
    const next: SearchRule = { ...base, lastUpdatedAt: at };
    if (patch.description !== undefined) {
      if (patch.description === null) delete next.description;
      else next.description = patch.description;
    }
    if (patch.precedence !== undefined) {
      if (patch.precedence === null) delete next.precedence;
      else next.precedence = patch.precedence;
    }
    if (patch.active !== undefined) next.active = patch.active ?? true;
    if (patch.conditions !== undefined) next.conditions = patch.conditions ?? {};
    if (patch.actions !== undefined) next.actions = patch.actions ?? [];
    return next;
  }

  putOp(rule: SearchRule): KvOp {
    return { db: DB, key: rule.uid, value: jsonValue(rule) };
  }

  deleteOp(uid: string): KvOp {
    return { db: DB, key: uid, value: null };
  }

  /** Applies committed writes to the in-memory view. */
  applyPut(rule: SearchRule): void {
    this.#rules.set(rule.uid, rule);
  }

  applyDelete(uid: string): void {
    this.#rules.delete(uid);
  }
}

/** A rule as the routes show it: `description` and `precedence` only when set. */
export function ruleView(r: SearchRule): Record<string, unknown> {
  const out: Record<string, unknown> = { uid: r.uid };
  if (r.description !== undefined) out.description = r.description;
  out.lastUpdatedAt = r.lastUpdatedAt;
  if (r.precedence !== undefined) out.precedence = r.precedence;
  Object.assign(out, { active: r.active, conditions: r.conditions, actions: r.actions });
  return out;
}
