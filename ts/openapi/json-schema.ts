/** JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) from the zod schemas the routes validate with. */
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/** The request side of `schema` (what a client sends), without the `$schema` header. */
export function fromZod(schema: z.ZodType): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'input' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** A query parameter's schema, from a body schema's property (lists travel comma-separated). */
export function queryParamSchema(property: JsonSchema): JsonSchema {
  const types = new Set<string>();
  const visit = (s: JsonSchema) => {
    if (typeof s.type === 'string') types.add(s.type);
    if (Array.isArray(s.type)) for (const t of s.type) types.add(String(t));
    for (const alt of (s.anyOf as JsonSchema[] | undefined) ?? []) visit(alt);
  };
  visit(property);
  if (types.has('integer')) return { type: 'integer' };
  if (types.has('number')) return { type: 'number' };
  if (types.has('boolean')) return { type: 'boolean' };
  if (types.has('array')) return { type: 'string', description: 'comma-separated list' };
  return { type: 'string' };
}
