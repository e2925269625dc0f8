/**
 * `POST /render-template` (experimental `renderRoute`): renders a document template, inline
 * or an index embedder's, with an inline document or one of an index's, as embedders see it.
 * The template language is the engine's (Liquid); this route only fetches the two parts.
 */
import { Router } from 'express';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { readJson } from '../http/body';
import { renderTemplate } from '../native';
import { checkIndexUid } from '../schemas/indexes';

type Part = Record<string, unknown>;

const TEMPLATE_KINDS = [
  'documentTemplate',
  'chatDocumentTemplate',
  'indexingFragment',
  'searchFragment',
  'inlineDocumentTemplate',
  'inlineFragment',
];
const INPUT_KINDS = ['indexDocument', 'inlineDocument', 'inlineSearch'];

function field(part: Part, name: string, kind: string, what: 'template' | 'input'): unknown {
  const v = part[name];
  if (v === undefined || v === null) {
    throw new ApiError(
      `invalid_render_${what}`,
      `error while fetching ${what}: parameter \`${name}\` missing for kind \`${kind}\``,
    );
  }
  return v;
}

function kindOf(part: unknown, what: 'template' | 'input', kinds: string[]): [Part, string] {
  if (typeof part !== 'object' || part === null || Array.isArray(part)) {
    throw new ApiError(`invalid_render_${what}`, `Invalid value type at \`.${what}\`: expected an object`);
  }
  const kind = (part as Part).kind;
  if (typeof kind !== 'string' || !kinds.includes(kind)) {
    throw new ApiError(
      `invalid_render_${what}`,
      `Unknown value \`${String(kind)}\` at \`.${what}.kind\`: expected one of ${kinds.map((k) => `\`${k}\``).join(', ')}`,
    );
  }
  return [part as Part, kind];
}

export function renderRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, registry } = deps;

  /** The template's source text. */
  function template(part: unknown): string {
    const [p, kind] = kindOf(part, 'template', TEMPLATE_KINDS);
    switch (kind) {
      case 'inlineDocumentTemplate':
        return String(field(p, 'inline', kind, 'template'));
      case 'documentTemplate': {
        const uid = checkIndexUid(String(field(p, 'indexUid', kind, 'template')));
        const name = String(field(p, 'embedder', kind, 'template'));
        const embedders = (registry.handle(uid).settings().embedders ?? {}) as Record<string, Record<string, unknown>>;
        const e = embedders[name];
        if (!e)
          throw new ApiError(
            'invalid_render_template',
            `error while fetching template: cannot find embedder \`${name}\` in index \`${uid}\``,
          );
        if (e.source === 'userProvided' || e.source === 'composite' || typeof e.documentTemplate !== 'string') {
          throw new ApiError(
            'invalid_render_template',
            `error while fetching template: embedder \`${name}\` in index \`${uid}\` does not use a document template.`,
          );
        }
        return e.documentTemplate;
      }
      default:
        throw new ApiError(
          'invalid_render_template',
          `error while fetching template: templates of kind \`${kind}\` are not available in this version of Quarry`,
        );
    }
  }

  /** The document the template is rendered with (null: not rendered). */
  async function input(part: unknown): Promise<Record<string, unknown> | null> {
    if (part === undefined || part === null) return null;
    const [p, kind] = kindOf(part, 'input', INPUT_KINDS);
    switch (kind) {
      case 'inlineDocument': {
        const doc = field(p, 'inline', kind, 'input');
        if (typeof doc !== 'object' || Array.isArray(doc))
          throw new ApiError('invalid_render_input', 'error while fetching input: `inline` must be an object');
        return doc as Record<string, unknown>;
      }
      case 'indexDocument': {
        const uid = checkIndexUid(String(field(p, 'indexUid', kind, 'input')));
        const id = String(field(p, 'id', kind, 'input'));
        const bytes = await registry.handle(uid).getDocument(id, null);
        if (bytes === null)
          throw new ApiError(
            'render_document_not_found',
            `error while fetching input: document \`${id}\` not found in \`${uid}\``,
          );
        return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
      }
      default:
        throw new ApiError(
          'invalid_render_input',
          `error while fetching input: inputs of kind \`${kind}\` are not available in this version of Quarry`,
        );
    }
  }

  r.post('/render-template', guard('settings.get', 'none'), async (req, res) => {
    if (!deps.features.get().renderRoute) {
      throw new ApiError(
        'feature_not_enabled',
        'calling the /render-template route requires enabling the `render_route` experimental feature. See https://github.com/orgs/meilisearch/discussions/888',
      );
    }
    const body = readJson(req) as Part | null;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new ApiError('bad_request', 'Invalid value type: expected an object');
    for (const k of Object.keys(body)) {
      if (k !== 'template' && k !== 'input')
        throw new ApiError('bad_request', `Unknown field \`${k}\`: expected one of \`template\`, \`input\``);
    }
    if (body.template === undefined) throw new ApiError('bad_request', 'Missing field `template`');
    const source = template(body.template);
    const doc = await input(body.input);
    res.json({ template: source, rendered: renderTemplate(source, doc === null ? null : JSON.stringify(doc)) });
  });

  return r;
}
