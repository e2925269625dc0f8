/** Runtime experimental features: stored flags, all returned on every read. */
import { z } from 'zod';
import { parseWith } from './errors/from-zod';
import { jsonValue, type Records } from './store/durable';

export const FEATURE_FLAGS = [
  // Meilisearch's order: of its answers, and of its error for an unknown field.
  'metrics',
  'logsRoute',
  'editDocumentsByFunction',
  'containsFilter',
  'dynamicSearchRules',
  'network',
  'getTaskDocumentsRoute',
  'taskQueueCompactionRoute',
  'compositeEmbedders',
  'chatCompletions',
  'multimodal',
  'foreignKeys',
  'disableDocumentsFetchQueue',
  'legacySearch',
  'renderRoute',
] as const;

export type Features = Record<(typeof FEATURE_FLAGS)[number], boolean>;

export const PatchSchema = z.strictObject(
  Object.fromEntries(FEATURE_FLAGS.map((f) => [f, z.boolean().nullable().optional()])) as Record<
    string,
    z.ZodOptional<z.ZodNullable<z.ZodBoolean>>
  >,
);

export class FeatureStore {
  private flags: Features;

  constructor(private readonly records: Records) {
    const stored = records.kv.get('meta', 'features');
    const base = Object.fromEntries(FEATURE_FLAGS.map((f) => [f, false])) as Features;
    this.flags = stored ? { ...base, ...(JSON.parse(stored.toString()) as Partial<Features>) } : base;
    records.watch('meta', (op) => {
      if (op.key === 'features' && op.value)
        this.flags = { ...base, ...(JSON.parse(op.value.toString()) as Partial<Features>) };
    });
  }

  get(): Features {
    return { ...this.flags };
  }

  /** One flag, without copying them all (for checks on every request). */
  enabled(flag: keyof Features): boolean {
    return this.flags[flag];
  }

  /**
   * Start-up options that turn flags on (`--experimental-enable-metrics`...): OR-ed with the
   * stored flags when the server starts, so a later PATCH can still turn them off.
   */
  enableAtStartup(flags: Partial<Record<keyof Features, boolean>>): void {
    for (const [k, v] of Object.entries(flags)) if (v) this.flags[k as keyof Features] = true;
  }

  async patch(body: unknown): Promise<Features> {
    const patch = parseWith(PatchSchema, body, {}, 'bad_request');
    const next = { ...this.flags };
    for (const [k, v] of Object.entries(patch)) if (typeof v === 'boolean') next[k as keyof Features] = v;
    await this.records.commit([{ db: 'meta', key: 'features', value: jsonValue(next) }]);
    return this.get();
  }

  /** Start-up options that turn a feature on (`--experimental-contains-filter`...): OR-ed with the stored flags, not stored. */
  enableAtStart(flags: Partial<Features>): void {
    for (const [k, v] of Object.entries(flags)) if (v) this.flags[k as keyof Features] = true;
  }
}
