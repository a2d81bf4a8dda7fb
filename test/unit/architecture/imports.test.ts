/**
 * The import rule (docs/ARCHITECTURE.md, "Who may import whom"). Every .ts file under src/ and
 * workers/ is parsed for its import, export-from and import() specifiers (type-only imports count:
 * a type is a dependency too); relative ones are resolved to files. A failing rule prints each
 * offending `file → import`, so the fix is named in the failure.
 *
 * Layers, lowest first: shm → domain → query → pool / transport → app → mcp (through its port).
 * Root files that everything may use: src/errors.ts, src/log.ts, src/version.ts.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

interface Rule {
  /** files this rule is about: a folder ('src/mcp/') or one file ('src/app.ts') */
  files: string[];
  mayNotImport: string[];
  /** targets inside `mayNotImport` that are allowed all the same (a room's door) */
  except?: string[];
  why: string;
}

// prettier-ignore
const RULES: Rule[] = [
  { files: ['src/shm/', 'src/domain/', 'src/query/', 'src/pool/', 'src/clients/', 'workers/'], mayNotImport: ['src/mcp/'],
    why: 'the engine never knows which front asks it; MCP is one front of several' },
  { files: ['src/transport/'], mayNotImport: ['src/mcp/'],
    why: 'the edge serves producers; it must not reach into MCP at all' },
  { files: ['src/mcp/'], mayNotImport: ['src/transport/', 'src/pool/', 'workers/', 'src/app.ts'],
    why: 'MCP sees only its port (src/mcp/port.ts), so any transport can serve the tools' },
  { files: ['src/domain/'], mayNotImport: ['src/shm/'], except: ['src/shm/index.ts'],
    why: 'domain logic uses shared memory only through the shm door' },
  { files: ['src/shm/'], mayNotImport: ['src/domain/'], except: ['src/domain/kinds.ts'],
    why: 'shm is layout and atomics; a kind id is the one domain fact that is part of the layout' },
  { files: ['src/shm/'], mayNotImport: ['src/query/', 'src/pool/', 'src/transport/', 'src/clients/', 'src/app.ts', 'workers/'],
    why: 'shm is the bottom layer' },
  { files: ['src/domain/'], mayNotImport: ['src/query/', 'src/pool/', 'src/transport/', 'src/clients/', 'src/app.ts', 'workers/'],
    why: 'domain is pure logic under every thread; nothing above it may leak in' },
  { files: ['src/query/'], mayNotImport: ['src/pool/', 'src/transport/', 'src/app.ts', 'workers/'],
    why: 'the read engine runs in the scan worker and on main alike; it knows no thread or socket' },
  { files: ['src/pool/', 'workers/'], mayNotImport: ['src/transport/', 'src/app.ts'],
    why: 'threads and their protocol do not know the edge that feeds them' },
  { files: ['src/transport/'], mayNotImport: ['src/app.ts'],
    why: 'the edge is built by the composition root, never the other way round' },
  { files: ['src/shm/', 'src/domain/', 'src/query/', 'src/pool/', 'src/transport/', 'src/clients/', 'workers/ingest.ts', 'workers/ingest-runner.ts', 'workers/scan.ts', 'workers/warmup.ts'], mayNotImport: ['src/sourcemaps/'],
    why: 'ingest, reads and the edge never fetch: source maps are resolved on main from what their own worker fetched, off the hot path' },
  { files: ['src/sourcemaps/'], mayNotImport: ['src/mcp/', 'src/transport/', 'src/pool/', 'src/shm/', 'src/query/', 'src/clients/', 'src/domain/', 'src/app.ts', 'workers/'],
    why: 'source maps know frames and URLs, nothing of the store, the tools or the threads that serve them' },
  { files: ['src/bridge/'], mayNotImport: ['src/transport/', 'src/pool/', 'src/shm/', 'src/query/', 'workers/', 'src/app.ts', 'src/app-port.ts', 'src/main.ts', 'src/mcp/server.ts', 'src/mcp/tools/', 'src/mcp/http/'],
    why: 'an agent waits on the bridge\'s start: it loads no native uWS, worker, pool, shared memory or engine' },
  { files: ['src/install/'], mayNotImport: ['src/transport/', 'src/pool/', 'src/shm/', 'src/query/', 'src/domain/', 'src/mcp/', 'src/clients/', 'workers/', 'src/app.ts', 'src/main.ts', 'src/config.ts'],
    why: 'gasoline install edits a client\'s config file: it loads no engine, schema or server' },
  { files: ['src/pairing/'], mayNotImport: ['src/transport/', 'src/pool/', 'src/shm/', 'src/query/', 'src/mcp/', 'src/clients/', 'src/domain/', 'src/bridge/', 'workers/', 'src/app.ts', 'src/config.ts'],
    why: 'the pairing secret and proofs stand alone (node crypto, the state dir): the edge, the app and the CLI use them, and the extension bundles spec.ts' },
  { files: ['src/model/'], mayNotImport: ['src/mcp/', 'src/transport/', 'src/pool/', 'src/shm/', 'src/query/', 'src/clients/', 'src/sourcemaps/', 'src/pairing/', 'src/bridge/', 'workers/', 'src/app.ts', 'src/config.ts'],
    why: 'the model room sees a triage context and a rule set, handed in: it reads no store and knows no tool, thread or socket' },
  { files: ['src/shm/', 'src/domain/', 'src/query/', 'src/pool/', 'src/transport/', 'src/clients/', 'src/sourcemaps/', 'src/pairing/', 'src/bridge/', 'workers/'], mayNotImport: ['src/model/'],
    why: 'only the tools (through the port) and the composition root reach a model: nothing on the ingest, read or edge path talks to a provider' },
  { files: ['src/doctor/'], mayNotImport: ['src/transport/', 'src/pool/', 'src/shm/', 'src/query/', 'src/mcp/', 'workers/', 'src/app.ts', 'src/main.ts'], except: ['src/transport/uws.ts', 'src/pool/malloc-trim.ts', 'src/pool/thread-policy.ts'],
    why: 'the doctor looks from outside, as a bridge does (probe, /health, files); it loads the native binaries (uWS, malloc_trim, thread-policy) only to prove they load' },
];

/** The one module that may write stdout: stdout belongs to MCP's JSON-RPC lines. */
const STDOUT_WRITER = 'src/mcp/stdout-writer.ts';
const ROOTS = ['src', 'workers'];

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(repo, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(join(repo, rel)).isDirectory()) out.push(...listTs(rel));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

interface Edge {
  from: string;
  to: string;
}

/** NodeNext specifiers name the emitted .js; the source is the .ts beside it. */
function resolveSpecifier(from: string, spec: string): string {
  const abs = resolve(join(repo, dirname(from)), spec);
  const ts = abs.replace(/\.js$/, '.ts');
  return relative(repo, existsSync(ts) ? ts : abs).split('\\').join('/');
}

const files = ROOTS.flatMap(listTs).sort();
const sources = new Map(files.map((f) => [f, readFileSync(join(repo, f), 'utf8')]));
const edges: Edge[] = [];
const unresolved: string[] = [];
for (const [file, text] of sources) {
  // import/export-from declarations, side-effect imports and import() — not imports in comments or strings
  for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
    if (!ref.fileName.startsWith('.')) continue;
    const to = resolveSpecifier(file, ref.fileName);
    if (!existsSync(join(repo, to))) unresolved.push(`${file} → ${ref.fileName}`);
    edges.push({ from: file, to });
  }
}

const within = (path: string, areas: readonly string[]): boolean => areas.some((a) => (a.endsWith('/') ? path.startsWith(a) : path === a));

function violations(rule: Rule): string[] {
  return edges.filter((e) => within(e.from, rule.files) && within(e.to, rule.mayNotImport) && !within(e.to, rule.except ?? [])).map((e) => `${e.from} → ${e.to}`);
}

/** Every cycle's files, found by a depth-first search (each strongly connected group once). */
function cycles(): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of edges) if (next.has(e.to)) next.get(e.from)!.push(e.to);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || next.get(v)!.includes(v)) found.push(group.sort());
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found;
}

/** Specifiers a module loads when it runs: `import type` and type-only names do not count. */
function runtimeImports(file: string, text: string): string[] {
  const out: string[] = [];
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
      const c = n.importClause;
      const typeOnly = !!c && (c.isTypeOnly || (!c.name && !!c.namedBindings && ts.isNamedImports(c.namedBindings) && c.namedBindings.elements.length > 0 && c.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) out.push(n.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier) && !n.isTypeOnly) {
      out.push(n.moduleSpecifier.text);
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteral(n.arguments[0])) {
      out.push(n.arguments[0].text);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** Calls, found in the syntax tree (so a comment or a string that mentions them does not count). */
function stdoutWrites(file: string, text: string): string[] {
  const out: string[] = [];
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n)) {
      const callee = n.expression.getText(sf).replace(/\s+/g, '');
      const forbidden = /^console\.(log|info|debug)$/.test(callee) || (callee === 'process.stdout.write' && file !== STDOUT_WRITER);
      if (forbidden) out.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1} ${callee}(…)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('import rule', () => {
  it('sees the whole tree: every relative import resolves to a file', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(edges.length).toBeGreaterThan(200);
    expect(unresolved).toEqual([]);
  });

  for (const rule of RULES) {
    it(`${rule.files.join(', ')} may not import ${rule.mayNotImport.join(', ')}${rule.except ? ` (except ${rule.except.join(', ')})` : ''}: ${rule.why}`, () => {
      expect(violations(rule)).toEqual([]);
    });
  }

  /** what these files import at run time, directly or not: our files, and the packages named */
  function runtimeReach(roots: string[]): { reached: Set<string>; packages: Set<string> } {
    const reached = new Set<string>();
    const packages = new Set<string>();
    const stack = [...roots];
    while (stack.length) {
      const f = stack.pop()!;
      if (reached.has(f)) continue;
      reached.add(f);
      for (const spec of runtimeImports(f, sources.get(f) ?? '')) {
        if (spec.startsWith('.')) stack.push(resolveSpecifier(f, spec));
        else packages.add(spec);
      }
    }
    return { reached, packages };
  }

  it('the bridge loads no engine: nothing it imports, directly or not, is uWS, a worker, the pool, shared memory, the read engine or the app', () => {
    const next = new Map<string, string[]>();
    for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    const reached = new Set<string>();
    const stack = ['src/bridge/index.ts', 'src/bridge/control.ts'];
    while (stack.length) {
      const f = stack.pop()!;
      if (reached.has(f)) continue;
      reached.add(f);
      stack.push(...(next.get(f) ?? []));
    }
    const heavy = ['src/transport/', 'src/pool/', 'src/shm/', 'src/query/', 'workers/', 'src/app.ts', 'src/main.ts', 'src/mcp/server.ts', 'src/mcp/tools/'];
    expect(reached.size).toBeGreaterThan(5);
    expect([...reached].filter((f) => within(f, heavy)).sort()).toEqual([]);
  });

  it('a running bridge loads no schema, SDK or fetch: what index.ts and options.ts import at run time, directly or not, is node built-ins and small modules of ours', () => {
    const { reached, packages } = runtimeReach(['src/bridge/options.ts', 'src/bridge/index.ts']);
    // zod alone is 14 MB of a bridge's 45; the SDK and fetch (undici) another 16 (PERFORMANCE.md)
    expect([...packages].filter((p) => !p.startsWith('node:')).sort()).toEqual([]);
    expect([...reached].filter((f) => within(f, ['src/config.ts', 'src/cli.ts', 'src/mcp/tool-defs.ts', 'src/mcp/transport.ts', 'src/mcp/guide.ts'])).sort()).toEqual([]);
    expect(reached.size).toBeGreaterThan(10);
    const fetches = [...reached].filter((f) => /\bfetch\(/.test((sources.get(f) ?? '').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '')));
    expect(fetches).toEqual([]);
  });

  it('bin/gasoline\'s first file (src/entry/early.ts, bundled with its own copies of what it imports) reaches only node built-ins and stateless modules of ours', () => {
    const { reached, packages } = runtimeReach(['src/entry/early.ts']);
    expect([...packages].filter((p) => !p.startsWith('node:')).sort()).toEqual([]);
    // a second copy of a module with state (the log level and file, a registry) would not be the one the program configures
    expect([...reached].filter((f) => within(f, ['src/log.ts', 'src/log-file.ts', 'src/config.ts', 'src/cli.ts', 'src/metrics.ts'])).sort()).toEqual([]);
    expect([...reached].sort()).toEqual(['src/bridge/options.ts', 'src/cli-options.ts', 'src/daemon/client-id-pattern.ts', 'src/entry/early.ts', 'src/mcp/early-stdio.ts', 'src/mcp/recorded-answers.ts', 'src/mcp/stdout-writer.ts', 'src/pool/thread-ids.ts']);
  });

  it('no import cycle between files', () => {
    expect(cycles()).toEqual([]);
  });

  it('the stdout check finds calls, not mentions', () => {
    const sample = "console.log('a'); // console.info('b')\nconst s = 'console.debug(1)';\nprocess.stdout.write('x');\nconsole.warn('stderr is fine');";
    expect(stdoutWrites('src/sample.ts', sample)).toEqual(['src/sample.ts:1 console.log(…)', 'src/sample.ts:3 process.stdout.write(…)']);
    expect(stdoutWrites(STDOUT_WRITER, sample)).toEqual([`${STDOUT_WRITER}:1 console.log(…)`]);
  });

  it(`nothing but JSON-RPC reaches stdout: no console.log/info/debug, no process.stdout.write outside ${STDOUT_WRITER}`, () => {
    const found = [...sources].flatMap(([f, text]) => stdoutWrites(f, text));
    expect(found).toEqual([]);
  });
});
