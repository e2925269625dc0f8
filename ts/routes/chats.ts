/**
 * `/chats` (the `chatCompletions` feature): workspaces, their settings (`chats/settings.ts`) and
 * their chat completions (`chats/completions.ts`), answered as server-sent events at the pace
 * of the client that reads them (`http/event-stream.ts`).
 */
import { type Request, Router } from 'express';
import { prepareCompletion, checkCompletionRequest, checkSingleChoice } from '../chats/completions';
import { chatNotFound, chatSettingsView, parseChatSettingsPatch } from '../chats/settings';
import { deleteChat, resetChatSettings, updateChatSettings } from '../commands/chats';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { rawBody, readJson } from '../http/body';
import { EventStream } from '../http/event-stream';
import { rejectUnknownParams, uintParam } from '../schemas/query';
import { SearchService } from '../search/service';

const DISCUSSION = 'https://github.com/orgs/meilisearch/discussions/835';

export function chatRoutes(deps: Deps, search = new SearchService(deps)): Router {
  const r = Router();
  const { guard, chats, features } = deps;
  const requireFeature = (what: string) => {
    if (!features.enabled('chatCompletions'))
      throw new ApiError(
        'feature_not_enabled',
        `${what} requires enabling the \`chat completions\` experimental feature. See ${DISCUSSION}`,
      );
  };
  const workspace = (req: Request) => String(req.params.workspace);

  r.get('/chats', guard('chats.get'), (req, res) => {
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['offset', 'limit']);
    const offset = uintParam(q, 'offset', 'invalid_index_offset', 0);
    const limit = uintParam(q, 'limit', 'invalid_index_limit', 20);
    // As in Meilisearch, the request is read before the feature is checked.
    requireFeature('listing the chats');
    const uids = chats.uids();
    res.json({
      results: uids.slice(offset, offset + limit).map((uid) => ({ uid })),
      offset,
      limit,
      total: uids.length,
    });
  });

  r.get('/chats/:workspace', guard('chats.get'), (req, res) => {
    requireFeature('displaying a chat');
    const uid = workspace(req);
    if (!chats.get(uid)) throw new ApiError('chat_not_found', `chat ${uid} not found`);
    res.json({ uid });
  });

  r.delete('/chats/:workspace', guard('chats.delete'), async (req, res) => {
    requireFeature('deleting a chat');
    const uid = workspace(req);
    await deleteChat(deps, uid);
    res.status(204).end();
  });

  const settingsFeature = () => requireFeature('using the /chats/settings route');
  r.get('/chats/:workspace/settings', guard('chatsSettings.get'), (req, res) => {
    settingsFeature();
    const s = chats.get(workspace(req));
    if (!s) throw chatNotFound(workspace(req));
    res.json(chatSettingsView(s));
  });
  r.patch('/chats/:workspace/settings', guard('chatsSettings.update'), async (req, res) => {
    const patch = parseChatSettingsPatch(readJson(req));
    settingsFeature();
    res.json(chatSettingsView(await updateChatSettings(deps, workspace(req), patch)));
  });
  r.delete('/chats/:workspace/settings', guard('chatsSettings.update'), async (req, res) => {
    settingsFeature();
    res.json(chatSettingsView(await resetChatSettings(deps, workspace(req))));
  });

  r.post('/chats/:workspace/chat/completions', guard('chatCompletions'), async (req, res) => {
    const body = checkCompletionRequest(readJson(req), rawBody(req).toString('utf8'));
    requireFeature('using the /chats chat completions route');
    checkSingleChoice(body);
    if (body.stream !== true)
      throw new ApiError(
        'unimplemented_non_streaming_chat_completions',
        'Non-streamed chat completions is not implemented',
      );
    const settings = chats.get(workspace(req));
    if (!settings) throw chatNotFound(workspace(req));
    // A stream's events are held in the response budget: none starts while it is spent.
    deps.responseBudget.refuseWhenFull();
    const run = await prepareCompletion({ deps, search, workspace: workspace(req), auth: req.auth!, settings, body });
    const events = new EventStream(res, deps.responseBudget, deps.config.chatStallTimeoutMs, deps.logger);
    if (await events.open()) await run((data) => events.send(data));
    events.end();
  });

  return r;
}
