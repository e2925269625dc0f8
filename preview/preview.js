// Quarry's search preview page: plain DOM, no framework. Documents are untrusted, so every
// value reaches the page as text nodes: highlights come back wrapped in two private-use
// characters (never HTML tags) and become <mark> elements here.
'use strict';
(() => {
  const PRE = '\uE000';
  const POST = '\uE001';
  const KEY_STORE = 'quarry-preview-key';
  const INDEX_STORE = 'quarry-preview-index';
  const HITS_PER_PAGE = 20;
  const FACET_VALUES_SHOWN = 12;
  const $ = (id) => document.getElementById(id);
  const ui = {
    index: $('index'),
    indexUid: $('index-uid'),
    keyButton: $('key-button'),
    keyForm: $('key-form'),
    keyReason: $('key-reason'),
    keyInput: $('key-input'),
    keyForget: $('key-forget'),
    error: $('error'),
    q: $('q'),
    stats: $('stats'),
    facets: $('facets'),
    hits: $('hits'),
    pager: $('pager'),
    prev: $('prev'),
    next: $('next'),
    page: $('page'),
  };
  const state = {
    key: localStorage.getItem(KEY_STORE) || '',
    index: '',
    q: '',
    page: 1,
    totalPages: 0,
    facets: [], // the attributes (or patterns) asked for as `facets`
    selected: new Map(), // attribute -> Set of values, ORed within an attribute and ANDed across
    controller: null,
    timer: 0,
  };

  class ApiFailure extends Error {
    constructor(status, body) {
      super(body?.message || `The server answered HTTP ${status}.`);
      this.status = status;
      this.code = body?.code || '';
    }
  }

  async function api(method, path, body, signal) {
    const headers = {};
    if (state.key) headers.Authorization = `Bearer ${state.key}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
    });
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (!res.ok) throw new ApiFailure(res.status, json);
    return json;
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function showError(err) {
    ui.error.textContent = err instanceof Error ? err.message : String(err);
    ui.error.dataset.code = err?.code || '';
    ui.error.hidden = false;
  }
  function hideError() {
    ui.error.hidden = true;
    ui.error.textContent = '';
    ui.error.dataset.code = '';
  }

  function askKey(reason) {
    ui.keyReason.textContent = reason;
    ui.keyForm.hidden = false;
    ui.keyInput.value = '';
    ui.keyInput.focus();
  }

  function clearResults() {
    ui.hits.replaceChildren();
    ui.facets.replaceChildren();
    ui.stats.textContent = '';
    ui.pager.hidden = true;
  }

  // Lists the indexes; a key that may search but not list indexes (a search-only key) gets a
  // field to name the index instead.
  async function start() {
    hideError();
    clearResults();
    let list;
    try {
      list = await api('GET', '/indexes?limit=1000');
    } catch (err) {
      if (err.status === 401) return askKey('This server needs an API key.');
      if (err.status !== 403) return showError(err);
      try {
        await api('POST', '/multi-search', { queries: [] });
      } catch (err2) {
        showError(err2);
        return askKey(err2.status === 401 || err2.status === 403 ? 'This API key was refused.' : 'Searching failed.');
      }
      ui.keyForm.hidden = true;
      ui.index.hidden = true;
      ui.indexUid.hidden = false;
      ui.indexUid.value = localStorage.getItem(INDEX_STORE) || '';
      if (ui.indexUid.value) return chooseIndex(ui.indexUid.value.trim());
      ui.indexUid.focus();
      return;
    }
    ui.keyForm.hidden = true;
    ui.index.hidden = false;
    ui.indexUid.hidden = true;
    const uids = list.results.map((i) => i.uid);
    ui.index.replaceChildren(
      ...uids.map((uid) => {
        const o = el('option', '', uid);
        o.value = uid;
        return o;
      }),
    );
    if (!uids.length) return showError(new Error('There is no index yet: add documents to an index first.'));
    const remembered = localStorage.getItem(INDEX_STORE);
    ui.index.value = uids.includes(remembered) ? remembered : uids[0];
    return chooseIndex(ui.index.value);
  }

  async function chooseIndex(uid) {
    state.index = uid;
    state.page = 1;
    state.selected.clear();
    hideError();
    clearResults();
    if (!uid) return;
    localStorage.setItem(INDEX_STORE, uid);
    try {
      state.facets = await facetAttributes(uid);
    } catch (err) {
      state.facets = [];
      return showError(err);
    }
    return search();
  }

  // The index's filterable attributes; a key without `settings.get` asks the search for every
  // filterable attribute (`*`) instead.
  async function facetAttributes(uid) {
    let attrs;
    try {
      attrs = await api('GET', `/indexes/${encodeURIComponent(uid)}/settings/filterable-attributes`);
    } catch (err) {
      if (err.status === 403) return ['*'];
      throw err;
    }
    const names = [];
    for (const a of attrs || []) {
      if (typeof a === 'string') names.push(a);
      else if (a && Array.isArray(a.attributePatterns) && !(a.features?.filter && a.features.filter.equality === false))
        names.push(...a.attributePatterns);
    }
    return names.filter((n) => !n.startsWith('_geo'));
  }

  const quote = (s) => `"${String(s).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

  // The chosen facet values as a filter, leaving out `except`'s.
  function filterOf(except) {
    const groups = [];
    for (const [attr, values] of state.selected) {
      if (values.size && attr !== except) groups.push([...values].map((v) => `${quote(attr)} = ${quote(v)}`));
    }
    return groups.length ? groups : null;
  }

  function schedule(delay) {
    clearTimeout(state.timer);
    state.timer = setTimeout(search, delay);
  }

  // One search at a time: a newer one aborts the request of the older, whose answer is dropped.
  // The counts of an attribute with chosen values come from the same search without that
  // attribute's filter (its other values stay clickable), in the same multi-search request.
  async function search() {
    clearTimeout(state.timer);
    if (!state.index) return;
    if (state.controller) state.controller.abort();
    const controller = new AbortController();
    state.controller = controller;
    const chosen = [...state.selected].filter(([, values]) => values.size).map(([attr]) => attr);
    const queries = [
      {
        indexUid: state.index,
        q: state.q,
        page: state.page,
        hitsPerPage: HITS_PER_PAGE,
        attributesToHighlight: ['*'],
        highlightPreTag: PRE,
        highlightPostTag: POST,
        showRankingScore: true,
        facets: state.facets,
        filter: filterOf(null),
      },
    ];
    for (const attr of chosen)
      queries.push({ indexUid: state.index, q: state.q, limit: 0, facets: [attr], filter: filterOf(attr) });
    try {
      const { results } = await api('POST', '/multi-search', { queries }, controller.signal);
      if (controller !== state.controller) return;
      const main = results[0];
      main.facetDistribution = main.facetDistribution || {};
      chosen.forEach((attr, i) => {
        main.facetDistribution[attr] = results[i + 1].facetDistribution?.[attr] || {};
      });
      hideError();
      render(main);
    } catch (err) {
      if (controller !== state.controller || err.name === 'AbortError') return;
      // Attributes (or `*`) that name nothing filterable in the documents are refused as
      // Meilisearch refuses them: the page then searches without facets.
      if (err.code === 'invalid_search_facets' && state.facets.length) {
        state.facets = [];
        return search();
      }
      clearResults();
      showError(err);
      if (err.status === 401 || err.status === 403) askKey('This API key cannot search this index.');
    }
  }

  // Text with the highlight markers turned into <mark> elements; anything else stays text.
  function highlighted(value) {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const frag = document.createDocumentFragment();
    let marked = false;
    for (const part of String(text).split(/([\uE000\uE001])/)) {
      if (part === PRE) marked = true;
      else if (part === POST) marked = false;
      else if (part) frag.append(marked ? el('mark', '', part) : document.createTextNode(part));
    }
    return frag;
  }

  // The heading is the first text field that does not look like an identifier.
  const headingOf = (doc) =>
    Object.keys(doc).find((k) => !k.startsWith('_') && typeof doc[k] === 'string' && !/(^|_)id$|[a-z]Id$/i.test(k));

  function hitCard(hit) {
    const li = el('li', 'hit');
    if (typeof hit._rankingScore === 'number') {
      const score = hit._rankingScore.toFixed(4);
      li.title = `Ranking score: ${score}`;
      li.append(el('span', 'score', score));
    }
    const shown = hit._formatted || hit;
    const heading = headingOf(shown);
    if (heading !== undefined) {
      const h = el('h3', 'title');
      h.append(highlighted(shown[heading]));
      li.append(h);
    }
    const dl = el('dl');
    for (const [name, value] of Object.entries(shown)) {
      if (name === heading || name.startsWith('_') || value === null || value === undefined) continue;
      const dd = el('dd');
      dd.append(highlighted(value));
      dl.append(el('dt', '', name), dd);
    }
    li.append(dl);
    return li;
  }

  function facetGroup(attr, counts) {
    const chosen = state.selected.get(attr) || new Set();
    const entries = Object.entries(counts)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, FACET_VALUES_SHOWN);
    for (const v of chosen) if (!entries.some(([k]) => k === v)) entries.push([v, counts[v] || 0]);
    if (!entries.length) return null;
    const section = el('section');
    section.dataset.attribute = attr;
    const ul = el('ul');
    for (const [value, count] of entries) {
      const button = el('button', 'facet-value');
      button.type = 'button';
      button.dataset.attribute = attr;
      button.dataset.value = value;
      button.setAttribute('aria-pressed', String(chosen.has(value)));
      button.append(el('span', 'value', value), el('span', 'count', String(count)));
      button.addEventListener('click', () => toggleFacet(attr, value));
      const li = el('li');
      li.append(button);
      ul.append(li);
    }
    section.append(el('h2', '', attr), ul);
    return section;
  }

  function toggleFacet(attr, value) {
    const values = state.selected.get(attr) || new Set();
    if (values.has(value)) values.delete(value);
    else values.add(value);
    state.selected.set(attr, values);
    state.page = 1;
    search();
  }

  function render(res) {
    ui.hits.replaceChildren(...res.hits.map(hitCard));
    const dist = res.facetDistribution || {};
    const groups = Object.keys(dist)
      .sort()
      .map((attr) => facetGroup(attr, dist[attr]))
      .filter(Boolean);
    ui.facets.replaceChildren(...groups);
    state.totalPages = res.totalPages || 0;
    const total = res.totalHits === undefined ? res.estimatedTotalHits : res.totalHits;
    ui.stats.textContent = `${total} ${total === 1 ? 'hit' : 'hits'} in ${res.processingTimeMs} ms`;
    ui.pager.hidden = state.totalPages <= 1;
    ui.page.textContent = `Page ${res.page} of ${state.totalPages}`;
    ui.prev.disabled = res.page <= 1;
    ui.next.disabled = res.page >= state.totalPages;
  }

  ui.q.addEventListener('input', () => {
    state.q = ui.q.value;
    state.page = 1;
    schedule(120);
  });
  ui.index.addEventListener('change', () => chooseIndex(ui.index.value));
  ui.indexUid.addEventListener('change', () => chooseIndex(ui.indexUid.value.trim()));
  ui.prev.addEventListener('click', () => {
    state.page = Math.max(1, state.page - 1);
    search();
  });
  ui.next.addEventListener('click', () => {
    state.page += 1;
    search();
  });
  ui.keyButton.addEventListener('click', () => {
    if (ui.keyForm.hidden) askKey('Use an API key for this server.');
    else ui.keyForm.hidden = true;
  });
  ui.keyForm.addEventListener('submit', (event) => {
    event.preventDefault();
    state.key = ui.keyInput.value.trim();
    if (state.key) localStorage.setItem(KEY_STORE, state.key);
    else localStorage.removeItem(KEY_STORE);
    start();
  });
  ui.keyForget.addEventListener('click', () => {
    state.key = '';
    localStorage.removeItem(KEY_STORE);
    start();
  });

  start();
})();
