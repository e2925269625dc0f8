/**
 * Filters before the filter engine exists (filters issue): no attribute is filterable, so any
 * filter fails with Meilisearch's message for an attribute that is not filterable, pointing
 * at the attribute's span (`1:3 id = 1`).
 */
export function notFilterableMessage(filter: unknown): string {
  const text = typeof filter === 'string' ? filter : JSON.stringify(filter);
  const m = /^(\s*)([A-Za-z0-9_.]+)/.exec(typeof filter === 'string' ? filter : '');
  const attr = m?.[2] ?? 'attribute';
  const start = (m?.[1].length ?? 0) + 1;
  const end = m ? start + attr.length : text.length + 1;
  return `Attribute \`${attr}\` is not filterable. This index does not have configured filterable attributes.\n${start}:${end} ${text}`;
}
