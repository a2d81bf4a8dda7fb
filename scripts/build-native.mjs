#!/usr/bin/env node
// Builds each addon native/linux-x64/<name>.node from native/<name>.c and records how
// (<name>.node.json: the source's and the binary's sha256, the compiler, the flags).
// Run by hand when the C source changes, on linux x64 with a C compiler and Node's headers; the
// binary is committed so that installing needs neither. `--out DIR` builds elsewhere (the test
// that checks the committed binary against its source).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** the addons: malloc-trim (src/pool/malloc-trim.ts), thread-policy (src/pool/helper-threads.ts) */
export const ADDONS = ['malloc-trim', 'thread-policy'];
export const source = (name) => join(root, `native/${name}.c`);
// -s: no symbols beyond the dynamic ones, so the bytes depend on the source, compiler and flags only
export const FLAGS = ['-std=c11', '-O2', '-Wall', '-Wextra', '-Werror', '-fPIC', '-fvisibility=hidden', '-shared', '-s'];

export function nodeHeaders() {
  const candidates = [join(dirname(process.execPath), '../include/node'), '/usr/include/node', '/usr/local/include/node'];
  return candidates.find((d) => existsSync(join(d, 'node_api.h')));
}

export function compilerVersion(cc = process.env.CC ?? 'cc') {
  return execFileSync(cc, ['--version'], { encoding: 'utf8' }).split('\n')[0].trim();
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

export function build(outDir, name = 'malloc-trim', cc = process.env.CC ?? 'cc') {
  if (!ADDONS.includes(name)) throw new Error(`no addon ${name}; there are ${ADDONS.join(', ')}`);
  const headers = nodeHeaders();
  if (!headers) throw new Error("Node's headers (node_api.h) not found next to node or in /usr/include/node");
  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, `${name}.node`);
  const src = source(name);
  execFileSync(cc, [...FLAGS, `-I${headers}`, '-o', out, src], { stdio: ['ignore', 'inherit', 'inherit'] });
  const record = { source_sha256: sha256(src), sha256: sha256(out), compiler: compilerVersion(cc), flags: FLAGS.join(' ') };
  writeFileSync(`${out}.json`, `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error('builds the linux-x64 binary only');
  const i = process.argv.indexOf('--out');
  for (const name of ADDONS) {
    const record = build(i > 0 ? process.argv[i + 1] : join(root, 'native/linux-x64'), name);
    process.stderr.write(`${name} ${JSON.stringify(record)}\n`);
  }
}
