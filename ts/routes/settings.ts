/** Settings: the whole object and one sub-route per setting. Updates are tasks. */
import { type Request, type Response, Router } from 'express';
import { updateSettings } from '../commands/indexes';
import type { Deps } from '../deps';
import { readJson } from '../http/body';
import { parseFields } from '../schemas/fields';
import { checkIndexUid } from '../schemas/indexes';
import { parseSettingsBody, parseSubrouteBody, resetPatch, SETTINGS_SUBROUTES, type SettingsPatch } from '../settings';
import { settingsView } from '../settings/view';
import { summaryView } from '../tasks/queue';

export function settingsRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, registry, features } = deps;
  const flags = () => features.get() as Record<string, boolean>;

  /** The engine's view of the index's settings, every field included. */
  const view = (uid: string): Record<string, unknown> => registry.handle(uid).settings();

  async function enqueue(req: Request, res: Response, patch: SettingsPatch, reset: boolean): Promise<void> {
    const uid = checkIndexUid(req.params.indexUid);
    res
      .status(202)
      .json(summaryView(await updateSettings(deps, uid, patch, reset, req.auth!.can('indexes.create', uid))));
  }

  r.get('/indexes/:indexUid/settings', guard('settings.get', 'param'), (req, res) => {
    res.json(settingsView(deps, checkIndexUid(req.params.indexUid)));
  });
  /** Every attribute the index has seen, with what the settings make of it. */
  r.post('/indexes/:indexUid/fields', guard('fields.post', 'param'), async (req, res) => {
    // Meilisearch reads the body first and looks the index up by the name as given (an invalid
    // name is an index not found here).
    const query = parseFields(readJson(req));
    const uid = String(req.params.indexUid);
    res
      .status(200)
      .type('application/json')
      .send(await registry.handle(uid).fields(query));
  });
  r.patch('/indexes/:indexUid/settings', guard('settings.update', 'param'), (req, res) => {
    const patch = parseSettingsBody(readJson(req), flags());
    checkIndexUid(req.params.indexUid);
    return enqueue(req, res, patch, false);
  });
  r.delete('/indexes/:indexUid/settings', guard('settings.update', 'param'), (req, res) =>
    enqueue(req, res, resetPatch(), true),
  );

  for (const { route, field, method } of SETTINGS_SUBROUTES) {
    const p = `/indexes/:indexUid/settings/${route}`;
    r.get(p, guard('settings.get', 'param'), (req, res) => {
      res.json(view(checkIndexUid(req.params.indexUid))[field]);
    });
    r[method](p, guard('settings.update', 'param'), (req, res) => {
      const patch = parseSubrouteBody(field, readJson(req), flags());
      checkIndexUid(req.params.indexUid);
      return enqueue(req, res, patch, false);
    });
    r.delete(p, guard('settings.update', 'param'), (req, res) => enqueue(req, res, resetPatch(field), true));
  }

  return r;
}
