/**
 * `/dynamic-search-rules` (the `dynamicSearchRules` experimental feature): list and read the
 * rules; patch, delete and clear them as tasks (`commands/search-rules.ts`). The writes take one
 * query parameter, `customMetadata`, kept on their task like on every other write; it is
 * checked before anything else, as Meilisearch reads the query string first.
 */
import { type Request, Router } from 'express';
import { clearSearchRules, deleteSearchRule, updateSearchRule } from '../commands/search-rules';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { readJson } from '../http/body';
import { rejectUnknownParams, stringParam } from '../schemas/query';
import { checkRuleUid, parseRuleList, parseRulePatch, ruleView } from '../search/rules';
import { summaryView } from '../tasks/queue';

const DISCUSSION = 'See https://github.com/orgs/meilisearch/discussions/884';

export function searchRuleRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, searchRules } = deps;

  /** Meilisearch words the refusal after the route (list and read) or the routes (writes). */
  function requireFeature(route: string | null): void {
    if (deps.features.get().dynamicSearchRules) return;
    const what = route
      ? `Calling the \`${route}\` route requires`
      : 'Using the `/dynamic-search-rules` routes requires';
    throw new ApiError(
      'feature_not_enabled',
      `${what} enabling the \`dynamic search rules\` experimental feature. ${DISCUSSION}`,
    );
  }

  r.post('/dynamic-search-rules', guard('dynamicSearchRules.get'), (req, res) => {
    const body = readJson(req);
    requireFeature('POST /dynamic-search-rules');
    const page = searchRules.list(parseRuleList(body));
    res.json({ ...page, results: page.results.map(ruleView) });
  });

  r.get('/dynamic-search-rules/:ruleUid', guard('dynamicSearchRules.get'), (req, res) => {
    requireFeature('GET /dynamic-search-rules/{:ruleUid}');
    const uid = checkRuleUid(req.params.ruleUid);
    const rule = searchRules.get(uid);
    if (!rule) throw new ApiError('dynamic_search_rule_not_found', `Dynamic search rule \`${uid}\` not found.`);
    res.json(ruleView(rule));
  });

  /** The `customMetadata` of a write's query string, the only parameter the writes take. */
  function customMetadataOf(req: Request): string | undefined {
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['customMetadata']);
    return stringParam(q, 'customMetadata', 'invalid_index_custom_metadata');
  }

  r.patch('/dynamic-search-rules/:ruleUid', guard('dynamicSearchRules.update'), async (req, res) => {
    const customMetadata = customMetadataOf(req);
    const body = readJson(req);
    requireFeature(null);
    const uid = checkRuleUid(req.params.ruleUid);
    const patch = parseRulePatch(body);
    res.status(202).json(summaryView(await updateSearchRule(deps, uid, patch, body, customMetadata)));
  });

  r.delete('/dynamic-search-rules/:ruleUid', guard('dynamicSearchRules.delete'), async (req, res) => {
    const customMetadata = customMetadataOf(req);
    requireFeature(null);
    const uid = checkRuleUid(req.params.ruleUid);
    res.status(202).json(summaryView(await deleteSearchRule(deps, uid, customMetadata)));
  });

  r.delete('/dynamic-search-rules', guard('dynamicSearchRules.delete'), async (req, res) => {
    const customMetadata = customMetadataOf(req);
    requireFeature(null);
    res.status(202).json(summaryView(await clearSearchRules(deps, customMetadata)));
  });

  return r;
}
