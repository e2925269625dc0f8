/**
 * The settings shapes are generated from the engine's types (`settings.generated.ts`, checked
 * against them by `cargo test -p quarry-node --test shapes`); these tests keep them the only
 * declaration and check the validators list keys in the generated order.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../errors/api-error';
import { parseSettingsBody } from './index';
import { SETTINGS_KEYS } from './settings.generated';

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.message;
    throw err;
  }
  throw new Error('expected an ApiError');
}

const expected = (keys: readonly string[]): string => keys.map((k) => `\`${k}\``).join(', ');

describe('generated settings shapes', () => {
  it('when types.ts is read, then it declares no settings shape by hand', () => {
    const source = readFileSync(join(__dirname, 'types.ts'), 'utf8');
    const declared = [...source.matchAll(/^export (?:type|interface) (\w+)/gm)].map((m) => m[1]);
    expect(declared).toEqual(['SettingsField', 'SettingsFeatures']);
  });

  it('when a body has an unknown key, then the message lists the keys in the generated order', () => {
    expect(message(() => parseSettingsBody({ nope: 1 }))).toContain(expected(SETTINGS_KEYS.settings));
    expect(message(() => parseSettingsBody({ typoTolerance: { nope: 1 } }))).toContain(
      expected(SETTINGS_KEYS.typoTolerance),
    );
    expect(message(() => parseSettingsBody({ embedders: { e: { nope: 1 } } }))).toContain(
      expected(SETTINGS_KEYS.embedder),
    );
    expect(
      message(() => parseSettingsBody({ embedders: { e: { source: 'composite', searchEmbedder: { nope: 1 } } } })),
    ).toContain(expected(SETTINGS_KEYS.subEmbedder));
  });
});
