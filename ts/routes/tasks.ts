import fs from 'node:fs';
/** Tasks and batches: listing, cancelation and deletion (enqueued by `commands/tasks.ts`, run by the worker). */
import { type Request, Router } from 'express';
import { cancelTasks, deleteTasks, visibleBatches, visibleTasks } from '../commands/tasks';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { parseCancelOrDeleteQuery, parseListQuery } from '../schemas/tasks';
import { batchView, payloadFile, summaryView, taskNotFound, taskView } from '../tasks/queue';
import { requireAllIndexes } from './access';

function originalFilter(req: Request): string {
  const i = req.originalUrl.indexOf('?');
  return i < 0 ? '?' : req.originalUrl.slice(i);
}

function parseUidParam(text: string, code: string, what: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 0xffffffff) {
    throw new ApiError(code, `${what} uid \`${text}\` is invalid. It should only contain numeric characters.`);
  }
  return Number(text);
}

export function taskRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, queue } = deps;

  r.get('/tasks', guard('tasks.get'), (req, res) => {
    const q = parseListQuery(req.query as Record<string, unknown>);
    const page = queue.list(q.filter, q.limit, q.from, q.reverse, visibleTasks(req.auth!));
    res.json({
      results: page.results.map(taskView),
      total: page.total,
      limit: page.limit,
      from: page.from,
      next: page.next,
    });
  });

  r.get('/tasks/:taskUid', guard('tasks.get'), async (req, res) => {
    const uid = parseUidParam(String(req.params.taskUid), 'invalid_task_uids', 'Task');
    let t = queue.get(uid);
    // In a replicated group a task accepted through another instance may not be here yet.
    if (!t && deps.replica && (await deps.replica.awaitTask(uid))) t = queue.get(uid);
    if (!t || !visibleTasks(req.auth!)(t)) throw taskNotFound(uid);
    res.json(taskView(t));
  });

  r.get('/tasks/:taskUid/documents', guard('tasks.get'), (req, res) => {
    if (!deps.features.get().getTaskDocumentsRoute) {
      throw new ApiError(
        'feature_not_enabled',
        'Getting the documents of an enqueued task requires enabling the `get task documents route` experimental feature. See https://github.com/orgs/meilisearch/discussions/808',
      );
    }
    const uid = parseUidParam(String(req.params.taskUid), 'invalid_task_uids', 'Task');
    const t = queue.get(uid);
    if (!t || !visibleTasks(req.auth!)(t)) throw taskNotFound(uid);
    const file = payloadFile(deps.updateFiles, t);
    if (!file || !fs.existsSync(file))
      throw new ApiError('task_file_not_found', `The task file for task \`${uid}\` was not found.`);
    res.status(200).type('application/x-ndjson');
    fs.createReadStream(file).pipe(res);
  });

  r.post('/tasks/cancel', guard('tasks.cancel'), async (req, res) => {
    requireAllIndexes(req, '/tasks/cancel');
    const filter = parseCancelOrDeleteQuery(req.query as Record<string, unknown>, 'cancel');
    const task = await cancelTasks(deps, req.auth!, filter, originalFilter(req));
    res.status(200).json(summaryView(task));
  });

  r.delete('/tasks', guard('tasks.delete'), async (req, res) => {
    requireAllIndexes(req, '/tasks');
    const filter = parseCancelOrDeleteQuery(req.query as Record<string, unknown>, 'delete');
    const task = await deleteTasks(deps, req.auth!, filter, originalFilter(req));
    res.status(200).json(summaryView(task));
  });

  r.get('/batches', guard('tasks.get'), (req, res) => {
    const q = parseListQuery(req.query as Record<string, unknown>);
    const page = queue.listBatches(q.filter, q.limit, q.from, q.reverse, visibleBatches(queue, req.auth!).task);
    res.json({
      results: page.results.map((b) => batchView(b, queue.batchProgress(b.uid))),
      total: page.total,
      limit: page.limit,
      from: page.from,
      next: page.next,
    });
  });

  r.get('/batches/:batchUid', guard('tasks.get'), (req, res) => {
    const uid = parseUidParam(String(req.params.batchUid), 'invalid_batch_uids', 'Batch');
    const b = queue.getBatch(uid);
    if (!b || !visibleBatches(queue, req.auth!).batch(b))
      throw new ApiError('batch_not_found', `Batch \`${uid}\` not found.`);
    res.json(batchView(b, queue.batchProgress(uid)));
  });

  return r;
}
