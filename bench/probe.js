'use strict';
/**
 * One query, both servers side by side: each top-10 hit with its rules' scores, and for a
 * hit only one server returned, the other server's score details for that document (asked
 * with the same query and `id = X`, which changes no rule's score). The first rule whose
 * figures differ for the same document is where the two rankings part.
 */

const RULES = ['words', 'typo', 'proximity', 'attributeRank', 'wordPosition', 'attribute', 'exactness'];

function brief(d) {
  if (!d) return '-';
  return RULES.filter((r) => d[r])
    .map((r) => {
      const x = d[r];
      let s = `${r.slice(0, 4)}=${x.score === undefined ? '?' : Number(x.score).toFixed(3)}`;
      if (r === 'exactness') s += `/${x.matchType}${x.matchingWords !== undefined ? `:${x.matchingWords}` : ''}`;
      if (r === 'typo') s += `/${x.typoCount}`;
      return s;
    })
    .join(' ');
}

async function one(call, index, body, id) {
  const r = await call('POST', `/indexes/${index}/search`, {
    ...body,
    filter: body.filter ? [body.filter, `id = ${id}`] : `id = ${id}`,
    limit: 1,
    showRankingScoreDetails: true,
    attributesToRetrieve: ['id'],
  });
  return r.hits?.[0]?._rankingScoreDetails;
}

async function probe(a, b, index, body) {
  const q = { ...body, limit: 10, showRankingScoreDetails: true, attributesToRetrieve: ['*'] };
  const [ra, rb] = await Promise.all([
    a('POST', `/indexes/${index}/search`, q),
    b('POST', `/indexes/${index}/search`, q),
  ]);
  const ha = ra.hits ?? [];
  const hb = rb.hits ?? [];
  console.log(`query ${JSON.stringify(body)}  totals a=${ra.estimatedTotalHits} b=${rb.estimatedTotalHits}`);
  const text = (h) => `${h.name ?? ''} | ${h.summary ?? ''}`.slice(0, 70);
  for (let i = 0; i < Math.max(ha.length, hb.length); i++) {
    const x = ha[i];
    const y = hb[i];
    const mark = x && y && x.id === y.id ? '=' : '≠';
    console.log(
      `${String(i).padStart(2)} ${mark} A ${x ? `${String(x.id).padStart(6)} ${brief(x._rankingScoreDetails)}  «${text(x)}»` : '-'}`,
    );
    if (mark === '≠') {
      console.log(
        `        B ${y ? `${String(y.id).padStart(6)} ${brief(y._rankingScoreDetails)}  «${text(y)}»` : '-'}`,
      );
      if (x && !hb.some((h) => h.id === x.id))
        console.log(`          B on A's ${x.id}: ${brief(await one(b, index, body, x.id))}`);
      if (y && !ha.some((h) => h.id === y.id))
        console.log(`          A on B's ${y.id}: ${brief(await one(a, index, body, y.id))}`);
    }
  }
}

module.exports = { probe };
