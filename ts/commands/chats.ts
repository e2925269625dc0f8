/** Chat workspaces (the `chatCompletions` feature): their deletion and their settings' changes (`chats/settings.ts`). */
import type { ChatSettingsPatch, ChatWorkspaceSettings } from '../chats/settings';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';

/** Deletes workspace `uid`, else `chat_not_found`. */
export async function deleteChat(deps: Deps, uid: string): Promise<void> {
  if (!(await deps.chats.delete(uid))) throw new ApiError('chat_not_found', `chat ${uid} not found`);
}

/** Applies a checked patch to the settings of workspace `uid`, creating it if needed; the settings as stored. */
export function updateChatSettings(deps: Deps, uid: string, patch: ChatSettingsPatch): Promise<ChatWorkspaceSettings> {
  return deps.chats.patch(uid, patch);
}

/** Resets the settings of workspace `uid` to the defaults (`chat_not_found` without one). */
export function resetChatSettings(deps: Deps, uid: string): Promise<ChatWorkspaceSettings> {
  return deps.chats.reset(uid);
}
