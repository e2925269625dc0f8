/**
 * Dynamic search rules as tasks (the `dynamicSearchRules` experimental feature): patches,
 * deletions and clears are `dsrUpdate` and `dsrClear` tasks on the pseudo-index `.meili_dsr`,
 * as Meilisearch records them; the worker applies them (see `search/rules.ts`).
 */
import type { Deps } from '../deps';
import { RULES_INDEX, type RulePatch } from '../search/rules';
import type { TaskRecord } from '../tasks/types';

/**
 * Creates rule `uid` or patches it with a checked patch; `rule` is the patch as sent, which
 * the task's details show.
 */
export function updateSearchRule(
  deps: Deps,
  uid: string,
  patch: RulePatch,
  rule: unknown,
  customMetadata?: string,
): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: RULES_INDEX,
    type: 'dsrUpdate',
    details: { rule, updatedRules: 1 },
    payload: { kind: 'dsrUpdate', uid, patch: patch as Record<string, unknown> },
    customMetadata,
  });
}

export function deleteSearchRule(deps: Deps, uid: string, customMetadata?: string): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: RULES_INDEX,
    type: 'dsrUpdate',
    details: { updatedRules: 1 },
    payload: { kind: 'dsrUpdate', uid, patch: null },
    customMetadata,
  });
}

/** Deletes every rule. */
export function clearSearchRules(deps: Deps, customMetadata?: string): Promise<TaskRecord> {
  return deps.queue.enqueue({
    indexUid: RULES_INDEX,
    type: 'dsrClear',
    details: { deletedDocuments: null },
    payload: { kind: 'dsrClear' },
    customMetadata,
  });
}
