/**
 * What a settingsUpdate task shows as its `details`, and the patch a DELETE produces. The
 * settings view itself comes from the engine (`NativeIndex.settings()`).
 */
import { hideSecret } from '../native';
import { setEntry } from './deserr';
import type { EmbedderPatch, SettingsField, SettingsPatch } from './types';
import { SETTINGS_FIELDS } from './vocabulary';

/** The patch a DELETE produces: every setting reset, or just `field`. */
export function resetPatch(field?: SettingsField): SettingsPatch {
  const patch: SettingsPatch = {};
  for (const f of field ? [field] : SETTINGS_FIELDS) patch[f] = null;
  return patch;
}

function maskEmbedders(embedders: Record<string, EmbedderPatch | null>): Record<string, EmbedderPatch | null> {
  const out: Record<string, EmbedderPatch | null> = {};
  for (const [name, config] of Object.entries(embedders)) {
    const copy = JSON.parse(JSON.stringify(config)) as EmbedderPatch | null;
    if (copy && typeof copy.apiKey === 'string') copy.apiKey = hideSecret(copy.apiKey);
    setEntry(out, name, copy);
  }
  return out;
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
