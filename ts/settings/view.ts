/**
 * What the settings routes and tasks show: `GET /settings` (keys in Meilisearch's order,
 * experimental settings only when their feature is on), a sub-route GET, and the `details`
 * of a settingsUpdate task. Embedder API keys are never shown in full.
 */
import { completeSettings } from './apply';
import { SETTINGS_FIELDS } from './defaults';
import { setEntry } from './deserr';
import type { Embedder, EmbedderPatch, Settings, SettingsFeatures, SettingsField, SettingsPatch } from './types';

/**
 * Meilisearch's redaction of a secret: under 10 bytes all of it, then the first 2, 3 or 5
 * bytes are kept (rounded up to a character boundary) before `XXXX...`.
 */
export function hideSecret(secret: string): string {
  const length = Buffer.byteLength(secret);
  const [keep, mask] = length < 10 ? [0, 'XXX...'] : length < 20 ? [2, 'XXXX...'] : length < 30 ? [3, 'XXXXX...'] : [5, 'XXXXXX...'];
  let kept = '';
  let bytes = 0;
  for (const ch of secret) {
    if (bytes >= keep) break;
    kept += ch;
    bytes += Buffer.byteLength(ch);
  }
  return kept + mask;
}

function maskEmbedders<T extends Embedder | EmbedderPatch>(embedders: Record<string, T | null>): Record<string, T | null> {
  const out: Record<string, T | null> = {};
  for (const [name, config] of Object.entries(embedders)) {
    const copy = JSON.parse(JSON.stringify(config)) as T | null;
    if (copy && typeof copy.apiKey === 'string') copy.apiKey = hideSecret(copy.apiKey);
    setEntry(out, name, copy);
  }
  return out;
}

/** Meilisearch's template when an embedder that renders documents names none. */
const DEFAULT_DOCUMENT_TEMPLATE =
  '{% for field in fields %}{% if field.is_searchable and field.value != nil %}{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}';

/** The defaults Meilisearch shows for fields an embedder was configured without. */
function withEmbedderDefaults(embedders: Record<string, Embedder | null>): Record<string, Embedder | null> {
  const out: Record<string, Embedder | null> = {};
  for (const [name, config] of Object.entries(embedders)) {
    if (!config || !['openAi', 'huggingFace', 'ollama', 'rest'].includes(String(config.source))) {
      setEntry(out, name, config);
      continue;
    }
    const copy: Record<string, unknown> = { ...config };
    if (copy.documentTemplate === undefined) copy.documentTemplate = DEFAULT_DOCUMENT_TEMPLATE;
    if (copy.documentTemplateMaxBytes === undefined) copy.documentTemplateMaxBytes = 400;
    if (config.source === 'huggingFace' && copy.pooling === undefined) copy.pooling = 'useModel';
    setEntry(out, name, copy as Embedder);
  }
  return out;
}

function fieldView(s: Settings, field: SettingsField): unknown {
  if (field === 'embedders') return maskEmbedders(withEmbedderDefaults(s.embedders));
  return JSON.parse(JSON.stringify(s[field])) as unknown;
}

/**
 * The body of `GET /indexes/{uid}/settings`. `foreignKeys` and `chat` appear only when the
 * `foreignKeys` / `chatCompletions` experimental features are on.
 */
export function settingsView(settings: Settings, features: SettingsFeatures = {}): Record<string, unknown> {
  const s = completeSettings(settings);
  const out: Record<string, unknown> = {};
  for (const field of SETTINGS_FIELDS) {
    if (field === 'foreignKeys' && !features.foreignKeys) continue;
    if (field === 'chat' && !features.chatCompletions) continue;
    out[field] = fieldView(s, field);
  }
  return out;
}

/** The body of a sub-route GET: that setting's current value. */
export function subrouteView(settings: Settings, field: SettingsField): unknown {
  return fieldView(completeSettings(settings), field);
}

/**
 * `details` of a settingsUpdate task: the update as submitted (after parsing), in Meilisearch's
 * key order. A reset shows as null, except displayed and searchable attributes which show `["*"]`.
 */
export function settingsTaskDetails(patch: SettingsPatch): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of SETTINGS_FIELDS) {
    const value = patch[field];
    if (value === undefined) continue;
    if (value === null) {
      out[field] = field === 'displayedAttributes' || field === 'searchableAttributes' ? ['*'] : null;
    } else if (field === 'embedders') {
      out[field] = maskEmbedders(patch.embedders ?? {});
    } else {
      out[field] = JSON.parse(JSON.stringify(value)) as unknown;
    }
  }
  return out;
}
