/** `/webhooks`: the places finished batches are announced to (see `webhooks/store.ts`). */
import { Router } from 'express';
import { createWebhook, deleteWebhook, updateWebhook } from '../commands/webhooks';
import type { Deps } from '../deps';
import { readJson } from '../http/body';
import { parseWebhookUuid, webhookView } from '../webhooks/store';

export function webhookRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, webhooks } = deps;

  r.get('/webhooks', guard('webhooks.get'), (_req, res) => {
    res.json({ results: webhooks.all().map(webhookView) });
  });
  r.post('/webhooks', guard('webhooks.create'), async (req, res) => {
    res.status(201).json(webhookView(await createWebhook(deps, readJson(req))));
  });
  r.get('/webhooks/:uuid', guard('webhooks.get'), (req, res) => {
    res.json(webhookView(webhooks.get(parseWebhookUuid(String(req.params.uuid)))));
  });
  r.patch('/webhooks/:uuid', guard('webhooks.update'), async (req, res) => {
    const uuid = parseWebhookUuid(String(req.params.uuid));
    res.json(webhookView(await updateWebhook(deps, uuid, readJson(req))));
  });
  r.delete('/webhooks/:uuid', guard('webhooks.delete'), async (req, res) => {
    await deleteWebhook(deps, parseWebhookUuid(String(req.params.uuid)));
    res.status(204).end();
  });
  return r;
}
