/** The settings object `GET /indexes/{uid}/settings` shows (and the embedded library returns). */
import type { Deps } from '../deps';

/** The engine's view of the index's settings; the experimental ones only while their feature is on. */
export function settingsView(deps: Deps, uid: string): Record<string, unknown> {
  const out = deps.registry.handle(uid).settings();
  const flags = deps.features.get() as Record<string, boolean>;
  if (!flags.foreignKeys) delete out.foreignKeys;
  if (!flags.chatCompletions) delete out.chat;
  return out;
}
