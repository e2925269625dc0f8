/**
 * The search preview page in a real browser: headless Chromium (Debian's package, never a
 * download) driven by puppeteer-core (`helpers/browser.ts`) against a real server with real
 * documents. Screenshots go to `test-artifacts/preview/` (git-ignored). The suite skips,
 * saying so, only where Chromium is absent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type BrowserHandle, CHROMIUM, startBrowser } from '../helpers/browser';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

// The functions below that run in the page use the browser's globals; the project's types are Node's.
declare const document: any;
declare const window: any;
declare const localStorage: any;
declare function getComputedStyle(e: unknown): any;

const ARTIFACTS = path.resolve(__dirname, '../../test-artifacts/preview');
const describeWithChromium = CHROMIUM ? describe : describe.skip;
if (!CHROMIUM)
  console.warn(
    'preview browser test SKIPPED: Chromium is absent (install the Debian package `chromium`, or set CHROMIUM_PATH)',
  );

const GENRES = ['drama', 'comedy', 'thriller'];
/** 30 films: two mention hobbits (the one with it in its title must rank first), one is hostile. */
function movies(): Record<string, unknown>[] {
  const docs: Record<string, unknown>[] = [
    { id: 1, title: 'The Hobbit', genre: 'fantasy', overview: 'Bilbo leaves the Shire with thirteen dwarves.' },
    { id: 2, title: 'Journey to the Mountain', genre: 'fantasy', overview: 'A hobbit carries a ring to a volcano.' },
    {
      id: 3,
      title: 'Injected <img src=x onerror="window.__pwned=1">',
      genre: '<b>bold</b>',
      overview: '<script>window.__pwned=2</script>',
    },
  ];
  for (let i = 4; i <= 30; i++)
    docs.push({ id: i, title: `Film number ${i}`, genre: GENRES[i % 3], overview: `An ordinary story, part ${i}.` });
  return docs;
}

describeWithChromium('GET / (search preview page) in Chromium', () => {
  let s: TestServer;
  let b: BrowserHandle;
  const index = uniqueIndex('films');
  let searchKey = '';

  /** Driver-side helpers (they run in the browser driver's process, see helpers/browser.ts). */
  const installHelpers = (ctx: any, artifacts: string) => {
    ctx.state.csp = [];
    ctx.state.open = async (url: string, key: string | null) => {
      if (ctx.page) await ctx.page.browserContext().close();
      const context = await ctx.browser.createBrowserContext();
      const page = await context.newPage();
      page.on('console', (m: any) => {
        if (/Content[- ]Security[- ]Policy/i.test(m.text())) ctx.state.csp.push(m.text());
      });
      await page.setViewport({ width: 1100, height: 900 });
      if (key !== null) {
        await page.evaluateOnNewDocument((k: string) => {
          if (!localStorage.getItem('quarry-preview-key')) localStorage.setItem('quarry-preview-key', k);
        }, key);
      }
      const res = await page.goto(`${url}/`, { waitUntil: 'load' });
      ctx.page = page;
      return { status: res.status(), csp: res.headers()['content-security-policy'] };
    };
    ctx.state.text = (sel: string) => ctx.page.$eval(sel, (e: any) => e.textContent);
    ctx.state.hidden = (sel: string) => ctx.page.$eval(sel, (e: any) => e.hidden);
    ctx.state.titles = () => ctx.page.$$eval('#hits .hit h3', (els: any[]) => els.map((e) => e.textContent));
    ctx.state.hitCount = (n: number) =>
      ctx.page.waitForFunction((k: number) => document.querySelectorAll('#hits .hit').length === k, {}, n);
    ctx.state.shot = (name: string) => ctx.page.screenshot({ path: `${artifacts}/${name}.png` });
  };

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    s = await startTestServer();
    let r = await s.api('PATCH', `/indexes/${index}/settings`, {
      body: { filterableAttributes: ['genre'], searchableAttributes: ['title', 'overview'] },
    });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    r = await s.api('POST', `/indexes/${index}/documents`, { body: movies() });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    r = await s.api('POST', '/keys', { body: { actions: ['search'], indexes: [index], expiresAt: null } });
    expect(r.status).toBe(201);
    searchKey = r.body.key;
    b = await startBrowser(CHROMIUM!);
    await b.run(installHelpers, ARTIFACTS);
  });
  afterAll(async () => {
    await b?.close();
    await s?.close();
  });

  it('when no key is stored on a protected server, then the page asks for one; a bad key shows the error', async () => {
    const opened = await b.run(({ state }, url) => state.open(url, null), s.url);
    expect(opened.status).toBe(200);
    expect(opened.csp).toMatch(/^default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-[^']+'/);
    const seen = await b.run(async ({ page, state }) => {
      await page.waitForSelector('#key-form:not([hidden])');
      const reason = await state.text('#key-reason');
      await page.type('#key-input', 'not-a-key');
      await page.click('#key-save');
      await page.waitForFunction(() => document.getElementById('error')!.dataset.code !== '');
      await state.shot('bad-key');
      return {
        reason,
        code: await page.$eval('#error', (e) => (e as any).dataset.code),
        errorHidden: await state.hidden('#error'),
        formHidden: await state.hidden('#key-form'),
        stored: await page.evaluate(() => localStorage.getItem('quarry-preview-key')),
      };
    });
    expect(seen).toEqual({
      reason: 'This server needs an API key.',
      code: 'invalid_api_key',
      errorHidden: false,
      formHidden: false,
      stored: 'not-a-key',
    });
  });

  it('when a query is typed, then the expected first hit shows with its highlight, the score on hover, and no document markup runs', async () => {
    await b.run(({ state }, url, key) => state.open(url, key), s.url, s.server.deps.config.masterKey);
    const seen = await b.run(async ({ page, state }, uid) => {
      await page.waitForFunction((u) => (document.getElementById('index') as any).value === u, {}, uid);
      await state.hitCount(20);
      const options = await page.$$eval('#index option', (os) => os.map((o) => o.textContent));
      await page.type('#q', 'hobbit');
      await state.hitCount(2);
      const marks = await page.$$eval('#hits .hit', (hits) =>
        hits.map((h) => [...h.querySelectorAll('mark')].map((m) => m.textContent)),
      );
      const before = await page.$eval('#hits .hit .score', (e) => getComputedStyle(e).visibility);
      await page.hover('#hits .hit');
      const after = await page.$eval('#hits .hit .score', (e) => getComputedStyle(e).visibility);
      await state.shot('query-hobbit');
      return {
        options,
        titles: await state.titles(),
        marks,
        before,
        after,
        score: await state.text('#hits .hit .score'),
        title: await page.$eval('#hits .hit', (e) => e.getAttribute('title')),
      };
    }, index);
    expect(seen.options).toContain(index);
    expect(seen.titles).toEqual(['The Hobbit', 'Journey to the Mountain']);
    expect(seen.marks).toEqual([['Hobbit'], ['hobbit']]);
    expect([seen.before, seen.after]).toEqual(['hidden', 'visible']);
    expect(Number(seen.score)).toBeGreaterThan(0);
    expect(Number(seen.score)).toBeLessThanOrEqual(1);
    expect(seen.title).toBe(`Ranking score: ${seen.score}`);

    // The hostile document shows as text: no element of its markup exists and nothing ran.
    const hostile = await b.run(async ({ page, state }) => {
      await page.$eval('#q', (e) => ((e as any).value = ''));
      await page.type('#q', 'injected');
      await state.hitCount(1);
      return {
        elements: await page.$$eval('#hits img, #hits script, #hits b, #facets b', (els) => els.length),
        title: await state.text('#hits .hit h3'),
        marks: await page.$$eval('#hits .hit h3 mark', (ms) => ms.map((m) => m.textContent)),
        facets: await state.text('#facets'),
        pwned: await page.evaluate(() => (window as any).__pwned ?? null),
      };
    });
    expect(hostile.elements).toBe(0);
    expect(hostile.title).toBe('Injected <img src=x onerror="window.__pwned=1">');
    expect(hostile.marks).toEqual(['Injected']);
    expect(hostile.facets).toContain('<b>bold</b>');
    expect(hostile.pwned).toBeNull();
  });

  it('when the page moves, then the next hits show; when a facet value is clicked, then the hits narrow to it', async () => {
    await b.run(({ state }, url, key) => state.open(url, key), s.url, s.server.deps.config.masterKey);
    const paged = await b.run(async ({ page, state }) => {
      await state.hitCount(20);
      const first = {
        stats: await state.text('#stats'),
        label: await state.text('#page'),
        prevDisabled: await page.$eval('#prev', (e) => (e as any).disabled),
        titles: await state.titles(),
      };
      await page.click('#next');
      await page.waitForFunction(() => document.getElementById('page')!.textContent === 'Page 2 of 2');
      await state.shot('page-2');
      const second = {
        titles: await state.titles(),
        nextDisabled: await page.$eval('#next', (e) => (e as any).disabled),
      };
      await page.click('#prev');
      await page.waitForFunction(() => document.getElementById('page')!.textContent === 'Page 1 of 2');
      return { first, second, back: await state.titles() };
    });
    expect(paged.first.stats).toMatch(/^30 hits/);
    expect(paged.first.label).toBe('Page 1 of 2');
    expect(paged.first.prevDisabled).toBe(true);
    expect(paged.second.titles).toHaveLength(10);
    expect(paged.second.titles.filter((t: string) => paged.first.titles.includes(t))).toEqual([]);
    expect(paged.second.nextDisabled).toBe(true);
    expect(paged.back).toEqual(paged.first.titles);

    const faceted = await b.run(async ({ page, state }) => {
      const drama = '#facets button[data-attribute="genre"][data-value="drama"]';
      const comedy = '#facets button[data-attribute="genre"][data-value="comedy"]';
      await page.waitForSelector(drama);
      const count = await state.text(`${drama} .count`);
      await page.click(drama);
      await state.hitCount(9);
      await state.shot('facet-drama');
      const narrowed = {
        pressed: await page.$eval(drama, (e) => e.getAttribute('aria-pressed')),
        stats: await state.text('#stats'),
        genres: await page.$$eval('#hits .hit dt', (dts) =>
          dts.filter((d) => d.textContent === 'genre').map((d) => d.nextElementSibling!.textContent),
        ),
        pagerHidden: await state.hidden('#pager'),
      };
      // A second value of the same attribute widens (OR); clicking both again clears the filter.
      await page.click(comedy);
      await state.hitCount(18);
      await page.click(drama);
      await state.hitCount(9);
      await page.click(comedy);
      await page.waitForFunction(() => document.getElementById('stats')!.textContent!.startsWith('30 hits'));
      return { count, narrowed };
    });
    expect(faceted.count).toBe('9');
    expect(faceted.narrowed.pressed).toBe('true');
    expect(faceted.narrowed.stats).toMatch(/^9 hits/);
    expect(faceted.narrowed.genres).toEqual(Array(9).fill('drama'));
    expect(faceted.narrowed.pagerHidden).toBe(true);
  });

  it('when a search-only key is used, then the index is named by hand and search, highlight and facets work', async () => {
    await b.run(({ state }, url, key) => state.open(url, key), s.url, searchKey);
    const seen = await b.run(async ({ page, state }, uid) => {
      await page.waitForSelector('#index-uid:not([hidden])');
      const start = { selectHidden: await state.hidden('#index'), errorHidden: await state.hidden('#error') };
      await page.type('#index-uid', uid);
      await page.keyboard.press('Enter');
      await state.hitCount(20);
      await page.type('#q', 'hobbit');
      await state.hitCount(2);
      // Facets come from `facets: ["*"]`: the key may not read the settings.
      await page.waitForSelector('#facets button[data-attribute="genre"][data-value="fantasy"]');
      const marks = await page.$$eval('#hits .hit h3 mark', (ms) => ms.map((m) => m.textContent));
      await state.shot('search-only-key');
      const titles = await state.titles();
      // A reload remembers the key and the index.
      await page.reload({ waitUntil: 'load' });
      await state.hitCount(20);
      return { start, titles, marks, remembered: await page.$eval('#index-uid', (e) => (e as any).value) };
    }, index);
    expect(seen).toEqual({
      start: { selectHidden: true, errorHidden: true },
      titles: ['The Hobbit', 'Journey to the Mountain'],
      marks: ['Hobbit'],
      remembered: index,
    });
  });

  it('when every page ran, then the Content-Security-Policy refused nothing', async () => {
    expect(await b.run(({ state }) => state.csp)).toEqual([]);
  });
});
