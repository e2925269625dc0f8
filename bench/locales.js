#!/usr/bin/env node
/**
 * Locales side by side: a small multilingual corpus (one field per language) loaded into two
 * servers with and without `localizedAttributes`, queried with and without `locales`; prints
 * every query whose hit ids or highlights differ between the two servers.
 *
 *   node bench/locales.js --a URL --b URL [--key KEY] [--json FILE]
 *
 * Against the reference, inside ../shared/tools/with-meilisearch.sh (Quarry started there too):
 *   node bench/locales.js --a http://127.0.0.1:7801 --b http://127.0.0.1:$MEILI_PORT --key masterKey
 * It reports, it does not judge: the answers pinned in __tests__/search/locales.test.ts come
 * from a run of it against Meilisearch 1.50.
 */
'use strict';
const fs = require('node:fs');

/** One document per language; the text sits in a field named after the language. */
const DOCS = [
  { id: 1, sv: 'Kött och fläsk på Åland' },
  { id: 2, sv: 'Kott och flask pa Aland' },
  { id: 3, tr: 'Işık ılık süt İstanbul' },
  { id: 4, vi: 'Đà Nẵng đẹp lắm' },
  { id: 5, el: 'Αθήνα πόλις ΟΔΟΣ' },
  { id: 6, he: 'שָׁלוֹם עולם' },
  { id: 7, ru: 'Москва ёлка Ёж' },
  { id: 8, zh: '我爱北京天安门' },
  { id: 9, zh: '體育運動' },
  { id: 10, ja: '東京タワーとひらがな' },
  { id: 11, th: 'ภาษาไทยง่ายนิดเดียว' },
  { id: 12, km: 'ភាសាខ្មែរ' },
  { id: 13, ar: 'كتاب المكتبة' },
  { id: 14, fa: 'کتاب خانه ی یک' },
  { id: 15, de: 'Dampfschifffahrtskapitän Straße' },
  { id: 16, ko: '한국어 사전' },
  { id: 17, fr: 'Œuvre déjà vue, cœur' },
];

const FIELDS = ['sv', 'tr', 'vi', 'el', 'he', 'ru', 'zh', 'ja', 'th', 'km', 'ar', 'fa', 'de', 'ko', 'fr'];
const LOCALE = {
  sv: 'swe',
  tr: 'tur',
  vi: 'vie',
  el: 'ell',
  he: 'heb',
  ru: 'rus',
  zh: 'cmn',
  ja: 'jpn',
  th: 'tha',
  km: 'khm',
  ar: 'ara',
  fa: 'pes',
  de: 'deu',
  ko: 'kor',
  fr: 'fra',
};

/** The indexes: none, each field its own language, everything one language. */
const INDEXES = {
  plain: null,
  each: FIELDS.map((f) => ({ attributePatterns: [f], locales: [LOCALE[f]] })),
  jpn: [{ attributePatterns: ['*'], locales: ['jpn'] }],
  swe: [{ attributePatterns: ['*'], locales: ['swe'] }],
  pes: [{ attributePatterns: ['*'], locales: ['pes'] }],
  cmn: [{ attributePatterns: ['*'], locales: ['cmn'] }],
  mixed: [{ attributePatterns: ['sv', 'fa'], locales: ['swe', 'pes'] }],
};

const QUERIES = [
  'kott',
  'kött',
  'fläsk',
  'flask',
  'åland',
  'aland',
  'Kött och',
  'isik',
  'ışık',
  'istanbul',
  'ilik',
  'da nang',
  'đà',
  'dep',
  'αθηνα',
  'πολις',
  'οδος',
  'οδοσ',
  'שלום',
  'שָׁלוֹם',
  'москва',
  'елка',
  'ёлка',
  'еж',
  '北京',
  '我爱北京天安门',
  '体育',
  '體育運動',
  '运动',
  '東京',
  'とうきょう',
  'タワー',
  'たわー',
  'ひらがな',
  'ヒラガナ',
  'ภาษาไทย',
  'ภาษาไทยง่ายนิดเดียว',
  'ไทย',
  'ភាសា',
  'ភាសាខ្មែរ',
  'كتاب',
  'کتاب',
  'المكتبة',
  'المکتبة',
  'خانه',
  'يك',
  'یک',
  'ی',
  'ي',
  'kapitän',
  'Dampfschifffahrtskapitän',
  'strasse',
  'straße',
  '한국어',
  '사전',
  'oeuvre',
  'œuvre',
  'coeur',
  'deja',
];

const QUERY_LOCALES = [undefined, ['swe'], ['jpn'], ['cmn'], ['pes'], ['ara'], ['tur'], ['deu'], ['eng']];

function parseArgs(argv) {
  const o = { key: 'masterKey' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--a') o.a = v();
    else if (a === '--b') o.b = v();
    else if (a === '--key') o.key = v();
    else if (a === '--json') o.json = v();
    else throw new Error(`unknown option ${a}`);
  }
  if (!o.a || !o.b) throw new Error('--a and --b name the two servers');
  return o;
}

async function call(url, key, method, path, body) {
  const res = await fetch(url + path, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function waitTask(url, key, uid) {
  for (;;) {
    const t = (await call(url, key, 'GET', `/tasks/${uid}`)).body;
    if (t.status === 'succeeded' || t.status === 'failed' || t.status === 'canceled') return t;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function load(url, key) {
  for (const [name, rules] of Object.entries(INDEXES)) {
    const uid = `locales_${name}`;
    await waitTask(url, key, (await call(url, key, 'DELETE', `/indexes/${uid}`)).body.taskUid);
    await waitTask(url, key, (await call(url, key, 'POST', '/indexes', { uid, primaryKey: 'id' })).body.taskUid);
    const settings = { searchableAttributes: FIELDS, ...(rules ? { localizedAttributes: rules } : {}) };
    const s = await waitTask(
      url,
      key,
      (await call(url, key, 'PATCH', `/indexes/${uid}/settings`, settings)).body.taskUid,
    );
    if (s.status !== 'succeeded') throw new Error(`${url} settings ${name}: ${JSON.stringify(s.error)}`);
    const d = await waitTask(url, key, (await call(url, key, 'POST', `/indexes/${uid}/documents`, DOCS)).body.taskUid);
    if (d.status !== 'succeeded') throw new Error(`${url} documents ${name}: ${JSON.stringify(d.error)}`);
  }
}

async function answers(url, key) {
  const out = {};
  for (const name of Object.keys(INDEXES)) {
    for (const q of QUERIES) {
      for (const locales of QUERY_LOCALES) {
        const body = { q, attributesToHighlight: ['*'], ...(locales ? { locales } : {}) };
        const r = await call(url, key, 'POST', `/indexes/locales_${name}/search`, body);
        const k = `${name} | ${q} | ${locales ? locales.join(',') : '-'}`;
        if (r.status !== 200) {
          out[k] = { error: r.body };
          continue;
        }
        out[k] = {
          ids: r.body.hits.map((h) => h.id),
          hl: r.body.hits.map((h) =>
            Object.entries(h._formatted)
              .filter(([f]) => f !== 'id')
              .map(([, v]) => v)
              .join(' '),
          ),
        };
      }
    }
  }
  return out;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  await load(o.a, o.key);
  await load(o.b, o.key);
  const a = await answers(o.a, o.key);
  const b = await answers(o.b, o.key);
  let same = 0;
  const diffs = [];
  for (const k of Object.keys(a)) {
    const x = JSON.stringify(a[k]);
    const y = JSON.stringify(b[k]);
    if (x === y) same++;
    else diffs.push({ query: k, a: a[k], b: b[k] });
  }
  for (const d of diffs) console.log(`${d.query}\n  a: ${JSON.stringify(d.a)}\n  b: ${JSON.stringify(d.b)}`);
  console.log(`${same} of ${Object.keys(a).length} answers identical, ${diffs.length} differ`);
  if (o.json) fs.writeFileSync(o.json, JSON.stringify({ a, b }, null, 1));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
