'use strict';
/**
 * Normalizing and comparing two answers. Only what must differ between two servers is
 * normalized: times, dates, durations, task and batch uids, request uids, random key uids and
 * key values, and storage sizes (two storage engines never take the same bytes). Everything else
 * is compared as it is: status, error code, type, message and link, every field of every hit in
 * order, facet counts, task details.
 */

const DATE_KEYS = new Set([
  'enqueuedAt',
  'startedAt',
  'finishedAt',
  'createdAt',
  'updatedAt',
  'lastUpdate',
  'duration',
]);
const UID_KEYS = new Set(['taskUid', 'batchUid', 'requestUid', 'queryUid', 'canceledBy']);
const SIZE_KEYS = new Set(['databaseSize', 'usedDatabaseSize', 'rawDocumentDbSize', 'avgDocumentSize']);
const HUMAN_SIZE = /^\d+(\.\d+)? ?(B|KiB|MiB|GiB|TiB|kB|MB|GB|TB|bytes)$/;

function normalize(value, ctx, key, parent) {
  if (Array.isArray(value)) return value.map((v) => normalize(v, ctx, undefined, value));
  if (value === null || typeof value !== 'object') {
    if (key === undefined) return value;
    if (DATE_KEYS.has(key)) return value === null ? null : `<${key}>`;
    if (key === 'processingTimeMs') return '<ms>';
    if (UID_KEYS.has(key)) return value === null ? null : '<uid>';
    if (SIZE_KEYS.has(key) || parent === ctx.sizesParent)
      return typeof value === 'string'
        ? HUMAN_SIZE.test(value)
          ? '<human size>'
          : value
        : typeof value === 'number'
          ? '<bytes>'
          : value;
    return value;
  }
  const out = {};
  const isTask = 'status' in value && ('uid' in value || 'taskUid' in value) && ('type' in value || 'details' in value);
  const isBatch = 'progress' in value && 'stats' in value && 'uid' in value;
  const isKey = 'actions' in value && 'indexes' in value && 'key' in value;
  for (const [k, v] of Object.entries(value)) {
    if ((isTask || isBatch) && k === 'uid') out[k] = '<uid>';
    else if (isKey && (k === 'uid' || k === 'key') && !ctx.givenKeyUids.has(value.uid)) out[k] = `<random ${k}>`;
    else if (k === 'internalDatabaseSizes' && v && typeof v === 'object') {
      // the storage engine's own databases: their names and sizes are the engine's
      if (parent && typeof parent === 'object' && 'progress' in parent) continue;
      out[k] = '<internal database sizes>';
    } else if (k === 'writeChannelCongestion') continue;
    else if (k === 'performanceDetails' && v && typeof v === 'object') out[k] = '<performance details>';
    else if (k === 'progressTrace') out[k] = '<engine trace>';
    else if (k === 'batchStrategy') out[k] = '<batch strategy>';
    else out[k] = normalize(v, ctx, k, value);
  }
  return out;
}

function isIdentified(list) {
  return list.length > 0 && list.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x) && 'id' in x);
}

/** A path with array indices folded into `[]` (the class of a difference). */
function classPath(p) {
  return p
    .replace(/\[\d+\]/g, '[]')
    .replace(/((?:^|\.)(?:facetDistribution|distribution|facetStats|stats)\.[^.]+)\..*$/, '$1.{value}')
    .replace(/\.(_formatted|_matchesPosition|_rankingScoreDetails)\..*$/, '.$1.{field}');
}

/** Differences between two normalized values: [{path, kind, a, b}] (a: Quarry, b: Meilisearch). */
function diff(a, b, p = '', out = [], opts = {}) {
  if (out.length > 50) return out;
  const ta = a === null ? 'null' : Array.isArray(a) ? 'array' : typeof a;
  const tb = b === null ? 'null' : Array.isArray(b) ? 'array' : typeof b;
  if (ta !== tb) {
    out.push({ path: p || '.', kind: ta === 'undefined' ? 'missing' : tb === 'undefined' ? 'extra' : 'type', a, b });
    return out;
  }
  if (ta === 'array' && isIdentified(a) && isIdentified(b)) {
    // hits and documents: which ones, in which order, is one difference; the ones both
    // returned are then compared field by field
    const ia = a.map((x) => x.id);
    const ib = b.map((x) => x.id);
    if (JSON.stringify(ia) !== JSON.stringify(ib)) out.push({ path: p || '.', kind: 'ids', a: ia, b: ib });
    b.forEach((y, j) => {
      const i = ia.indexOf(y.id);
      if (i >= 0) diff(a[i], y, `${p}[${j}]`, out, opts);
    });
    return out;
  }
  if (ta === 'array') {
    if (a.length !== b.length) out.push({ path: p || '.', kind: 'length', a: a.length, b: b.length });
    for (let i = 0; i < Math.min(a.length, b.length); i++) diff(a[i], b[i], `${p}[${i}]`, out, opts);
    return out;
  }
  if (ta === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    for (const k of kb) if (!(k in a)) out.push({ path: `${p}.${k}`, kind: 'missing', a: undefined, b: b[k] });
    for (const k of ka) if (!(k in b)) out.push({ path: `${p}.${k}`, kind: 'extra', a: a[k], b: undefined });
    for (const k of ka) if (k in b) diff(a[k], b[k], `${p}.${k}`, out, opts);
    const common = ka.filter((k) => k in b);
    const commonB = kb.filter((k) => k in a);
    if (opts.keyOrder && common.join('\u0000') !== commonB.join('\u0000') && !out.some((d) => d.path.startsWith(p)))
      out.push({ path: p || '.', kind: 'key order', a: common, b: commonB });
    return out;
  }
  if (a !== b) {
    if (ta === 'number' && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b))) return out;
    out.push({ path: p || '.', kind: 'value', a, b });
  }
  return out;
}

module.exports = { normalize, diff, classPath };
