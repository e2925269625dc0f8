/**
 * `POST /render-template` (experimental `renderRoute`): Liquid document templates rendered
 * with inline or stored documents, and the errors Meilisearch 1.50 gives.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const render = (body: unknown) => s.api('POST', '/render-template', { body });
const inline = (template: string, doc: unknown = { id: 'd' }) => ({
  template: { kind: 'inlineDocumentTemplate', inline: template },
  input: { kind: 'inlineDocument', inline: doc },
});

it('when the feature is off, then the route is refused', async () => {
  const r = await render(inline('x {{doc.id}}'));
  expect(r.status).toBe(400);
  expect(r.body.code).toBe('feature_not_enabled');
});

describe('with the feature on', () => {
  beforeAll(async () => {
    expect((await s.api('PATCH', '/experimental-features', { body: { renderRoute: true } })).status).toBe(200);
  });

  it('when a template and a document are inline, then the rendered text comes back with the template', async () => {
    expect((await render(inline('x {{doc.id}}'))).body).toEqual({ template: 'x {{doc.id}}', rendered: 'x d' });
    const fields = await render(
      inline('{% for f in fields %}{{f.name}}={{f.value}};{% endfor %}', { a: 1, b: 'two', c: [1, 'x'] }),
    );
    expect(fields.body.rendered).toBe('a=1;b=two;c=1x;');
    expect((await render({ template: { kind: 'inlineDocumentTemplate', inline: 'x {{doc.id}}' } })).body).toEqual({
      template: 'x {{doc.id}}',
      rendered: null,
    });
  });

  it("when the template or the document is wrong, then Meilisearch's codes answer", async () => {
    const parse = await render(inline('x {{doc.id'));
    expect(parse.body.code).toBe('template_parsing_error');
    expect(parse.body.message).toMatch(/^error while fetching template: user error: cannot parse template: liquid:/);
    const missing = await render(inline('x {{doc.nope}}'));
    expect(missing.body.code).toBe('template_rendering_error');
    expect(missing.body.message).toMatch(
      /^error while rendering template: user error: missing field in document: liquid: Unknown index/,
    );
    expect((await render({ template: { kind: 'bogus' }, input: null })).body.code).toBe('invalid_render_template');
    expect((await render({ template: { kind: 'inlineDocumentTemplate' } })).body.message).toBe(
      'error while fetching template: parameter `inline` missing for kind `inlineDocumentTemplate`',
    );
    expect((await render({ input: { kind: 'inlineDocument', inline: {} } })).body).toMatchObject({
      code: 'bad_request',
      message: 'Missing field `template`',
    });
  });

  it('when the parts come from an index, then its embedder template and its document are used', async () => {
    const uid = uniqueIndex('render');
    // The document opts out of the userProvided embedder added after it (else the settings
    // task fails, as on Meilisearch).
    let t = await s.api('POST', `/indexes/${uid}/documents`, {
      body: [{ id: 1, title: 'hello', _vectors: { u: null } }],
    });
    await s.waitTask(t.body.taskUid);
    t = await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: { embedders: { u: { source: 'userProvided', dimensions: 2 } } },
    });
    expect((await s.waitTask(t.body.taskUid)).status).toBe('succeeded');
    const r = await render({
      template: { kind: 'inlineDocumentTemplate', inline: '{{doc.title}}!' },
      input: { kind: 'indexDocument', indexUid: uid, id: '1' },
    });
    expect(r.body.rendered).toBe('hello!');
    const none = await render({
      template: { kind: 'inlineDocumentTemplate', inline: '{{doc.title}}' },
      input: { kind: 'indexDocument', indexUid: uid, id: '9' },
    });
    expect(none.body).toMatchObject({
      code: 'render_document_not_found',
      message: `error while fetching input: document \`9\` not found in \`${uid}\``,
    });
    const user = await render({ template: { kind: 'documentTemplate', indexUid: uid, embedder: 'u' } });
    expect(user.body.message).toBe(
      `error while fetching template: embedder \`u\` in index \`${uid}\` does not use a document template.`,
    );
    const unknown = await render({ template: { kind: 'documentTemplate', indexUid: uid, embedder: 'zz' } });
    expect(unknown.body.message).toBe(`error while fetching template: cannot find embedder \`zz\` in index \`${uid}\``);
  });

  it('when a search key asks, then it is refused', async () => {
    const keys = await s.api('GET', '/keys');
    const search = keys.body.results.find(
      (k: { actions: string[] }) => k.actions.length === 1 && k.actions[0] === 'search',
    );
    const r = await s.api('POST', '/render-template', { body: inline('x'), key: search.key });
    expect(r.status).toBe(403);
  });
});
