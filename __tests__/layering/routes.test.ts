/**
 * Routes only translate (ARCHITECTURE.md: routes → commands → binding → engine): a file of
 * `ts/routes/` parses the request, calls a command of `ts/commands/` (or, for a read, the
 * binding) and shapes the answer. Every write, a task enqueued or a store changed, goes through
 * a command, which the embedded library calls too; and a command knows nothing of HTTP.
 *
 * Each route file is read with TypeScript's parser (comments and strings do not count) and
 * refused when it names a write entry point: the queue's `enqueue` anywhere, a write method of
 * one of the stores routes are given in `Deps` called on that store (`deps.keys.put(..)`, or
 * `keys.put(..)` after `const { keys } = deps`), or one of the binding's writes. The first tests
 * guard the scan itself: every write method listed is still a member of its store, and the scan
 * finds each kind of write in a sample.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');

/** The stores of `Deps` (`ts/deps.ts`) that routes read, with the methods that write. */
const STORES: Array<{ prop: string; type: string; file: string; writes: string[] }> = [
  { prop: 'queue', type: 'TaskQueue', file: 'ts/tasks/queue.ts', writes: ['enqueue', 'cancel', 'delete'] },
  { prop: 'keys', type: 'KeyStore', file: 'ts/auth/keys.ts', writes: ['put', 'delete', 'ensureDefaults'] },
  {
    prop: 'webhooks',
    type: 'WebhookStore',
    file: 'ts/webhooks/store.ts',
    writes: ['create', 'update', 'delete', 'replaceAll'],
  },
  {
    prop: 'chats',
    type: 'ChatStore',
    file: 'ts/chats/settings.ts',
    writes: ['patch', 'reset', 'delete', 'replaceAll'],
  },
  {
    prop: 'features',
    type: 'FeatureStore',
    file: 'ts/features.ts',
    writes: ['patch', 'enableAtStart', 'enableAtStartup'],
  },
  { prop: 'network', type: 'NetworkStore', file: 'ts/network/state.ts', writes: ['save'] },
  { prop: 'searchRules', type: 'SearchRules', file: 'ts/search/rules.ts', writes: ['applyPut', 'applyDelete'] },
  { prop: 'compaction', type: 'TaskDbCompaction', file: 'ts/tasks/compaction.ts', writes: ['compact'] },
  {
    prop: 'registry',
    type: 'IndexRegistry',
    file: 'ts/indexes/registry.ts',
    writes: ['commit', 'applyPut', 'applyDelete', 'setAside', 'destroyDir', 'removeOrphans'],
  },
  { prop: 'kv', type: 'KvStore', file: 'ts/native/kv.ts', writes: ['commit'] },
];

/** Names that write wherever they appear: the queue's entry point and the binding's writes. */
const WRITE_NAMES = new Set(['enqueue', 'applyBatch', 'stageDocuments']);

const WRITES_OF = new Map(STORES.map((s) => [s.prop, new Set(s.writes)]));

function parse(file: string, text = fs.readFileSync(path.join(ROOT, file), 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  ts.forEachChild(node, (child) => walk(child, visit));
}

/** The store a receiver names: `keys`, `deps.keys`, `this.deps.keys`. */
function storeName(receiver: ts.Expression): string | null {
  if (ts.isIdentifier(receiver)) return receiver.text;
  if (ts.isPropertyAccessExpression(receiver)) return receiver.name.text;
  return null;
}

/** The writes a source file makes, as `line: text`. */
function writesIn(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const at = (n: ts.Node) =>
    `${source.fileName}:${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1}: ${n.getText(source)}`;
  walk(source, (n) => {
    if (ts.isPropertyAccessExpression(n) && WRITE_NAMES.has(n.name.text)) found.push(at(n));
    else if (ts.isBindingElement(n) && WRITE_NAMES.has((n.propertyName ?? n.name).getText(source))) found.push(at(n));
    else if (ts.isImportSpecifier(n) && WRITE_NAMES.has((n.propertyName ?? n.name).text)) found.push(at(n));
    else if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
      const [store, method] = [storeName(n.expression.expression), n.expression.name.text];
      if (store !== null && !WRITE_NAMES.has(method) && WRITES_OF.get(store)?.has(method)) found.push(at(n.expression));
    }
  });
  return found;
}

function filesOf(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f));
}

/** The members of the class or interface `type` declared in `file`, each with its declared type's text. */
function membersOf(file: string, type: string): Map<string, string> | null {
  const source = parse(file);
  let members: Map<string, string> | null = null;
  walk(source, (n) => {
    if ((ts.isClassDeclaration(n) || ts.isInterfaceDeclaration(n)) && n.name?.text === type) {
      members = new Map();
      for (const m of n.members as ts.NodeArray<ts.ClassElement | ts.TypeElement>) {
        if (m.name && ts.isIdentifier(m.name))
          members.set(m.name.text, ts.isPropertySignature(m) && m.type ? m.type.getText(source) : '');
      }
    }
  });
  return members;
}

describe('layering: routes only translate', () => {
  it('when the stores are listed, then each is a property of Deps and each write is a member of its store', () => {
    const deps = membersOf('ts/deps.ts', 'Deps')!;
    for (const s of STORES) {
      expect({ prop: s.prop, type: deps.get(s.prop) }).toEqual({ prop: s.prop, type: s.type });
      const members = membersOf(s.file, s.type);
      expect({ store: s.type, writes: members && s.writes.filter((w) => members.has(w)) }).toEqual({
        store: s.type,
        writes: s.writes,
      });
    }
  });

  it('when a sample writes in each way, then the scan finds every write', () => {
    const sample = parse(
      'sample.ts',
      [
        "import { stageDocuments } from '../native';",
        'const { queue, keys } = deps;',
        '// queue.enqueue({}) in a comment does not count, nor does "keys.put(x)" in a string',
        "r.delete('/x', (req, res) => res.end());",
        'await deps.queue.enqueue(init);',
        'const { enqueue } = queue;',
        'await keys.put([record]);',
        'await this.deps.network.save(next);',
        'await queue.cancel(filter, visible, text);',
        'keys.get(uid);',
        'queue.list(filter, 1, null, false, all);',
      ].join('\n'),
    );
    expect(writesIn(sample)).toEqual([
      'sample.ts:1: stageDocuments',
      'sample.ts:5: deps.queue.enqueue',
      'sample.ts:6: enqueue',
      'sample.ts:7: keys.put',
      'sample.ts:8: this.deps.network.save',
      'sample.ts:9: queue.cancel',
    ]);
  });

  it('when a route file is read, then it enqueues no task and writes no store: commands do', () => {
    const routes = filesOf('ts/routes');
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.flatMap((f) => writesIn(parse(f)))).toEqual([]);
  });

  it('when a command file is read, then nothing it imports, directly or through other files, is Express', () => {
    const commands = filesOf('ts/commands');
    expect(commands.length).toBeGreaterThan(2);
    const chains = commands.flatMap((f) => expressChains(f));
    expect(chains).toEqual([]);
  });

  it('when a sample command reaches Express through another file, then the walk finds the chain', () => {
    const files = new Map([
      ['ts/commands/a.ts', "import { b } from '../b';\nimport type { X } from '../c';\nimport { d } from '../d';"],
      ['ts/b.ts', "import { Router } from 'express';"],
      ['ts/c.ts', "import { Router } from 'express';"],
      ['ts/d.ts', "import type { Request } from 'express';"],
    ]);
    expect(expressChains('ts/commands/a.ts', (f) => files.get(f))).toEqual([
      'ts/commands/a.ts → ts/b.ts → express',
      'ts/commands/a.ts → ts/d.ts → express',
    ]);
  });
});

/** The imports a file names, as written, each with whether it is type-only. */
function importsOf(source: ts.SourceFile): Array<{ spec: string; typeOnly: boolean }> {
  const out: Array<{ spec: string; typeOnly: boolean }> = [];
  walk(source, (n) => {
    if (!ts.isImportDeclaration(n) || !ts.isStringLiteral(n.moduleSpecifier)) return;
    const clause = n.importClause;
    const named = clause?.namedBindings;
    const typeOnly =
      clause?.isTypeOnly === true ||
      (clause !== undefined &&
        !clause.name &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.every((e) => e.isTypeOnly));
    out.push({ spec: n.moduleSpecifier.text, typeOnly });
  });
  return out;
}

/**
 * The chains of imports from `file` that reach Express, as `a → b → express`: the project's
 * files its value imports reach are followed (a type-only import brings no code), and any of
 * them that imports Express, even for its types only, is HTTP code.
 */
function expressChains(
  file: string,
  read: (f: string) => string | undefined = (f) =>
    fs.existsSync(path.join(ROOT, f)) ? fs.readFileSync(path.join(ROOT, f), 'utf8') : undefined,
): string[] {
  const seen = new Set<string>();
  const found: string[] = [];
  const visit = (f: string, chain: string[]) => {
    if (seen.has(f)) return;
    seen.add(f);
    const text = read(f);
    if (text === undefined) return;
    for (const { spec, typeOnly } of importsOf(parse(f, text))) {
      if (/^express(\/|$)/.test(spec)) found.push([...chain, f, spec].join(' → '));
      else if (spec.startsWith('.') && !typeOnly) {
        const base = path.posix.join(path.posix.dirname(f), spec);
        const next = [`${base}.ts`, `${base}/index.ts`].find((c) => read(c) !== undefined);
        if (next) visit(next, [...chain, f]);
      }
    }
  };
  visit(file, []);
  return found;
}
