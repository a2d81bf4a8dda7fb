/**
 * The per-client trail (src/clients/trail.ts): one JSON line per call, 0600 whatever the umask,
 * arguments cut to a bound, rotation at a size with one older file kept, a bounded buffer, and a
 * write error that turns the trail off without throwing.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClientTrail, TrailBook } from '../../../src/clients/trail.js';
import { setLogLevel } from '../../../src/log.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gasoline-trail-'));
  setLogLevel('silent');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  setLogLevel('info');
});

const lines = (path: string): Array<Record<string, unknown>> =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('client trail', () => {
  it('appends one line per call, 0600 under a loose umask, in a 0700 folder', async () => {
    const old = process.umask(0o000);
    try {
      const t = new ClientTrail(join(dir, 'clients'), 'abc123', { now: () => Date.UTC(2026, 0, 2, 3, 4, 5) });
      t.append({ tool: 'observe', args: { what: 'errors' }, resultChars: 120, ms: 7.12345 });
      t.append({ tool: 'configure', args: { action: 'checkpoint' }, resultChars: 40, ms: 1, code: 'invalid_argument' });
      await t.close();
      expect(statSync(t.path).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'clients')).mode & 0o777).toBe(0o700);
      expect(lines(t.path)).toEqual([
        { ts: '2026-01-02T03:04:05.000Z', tool: 'observe', args: { what: 'errors' }, result_chars: 120, ms: 7.12 },
        { ts: '2026-01-02T03:04:05.000Z', tool: 'configure', args: { action: 'checkpoint' }, result_chars: 40, ms: 1, error: 'invalid_argument' },
      ]);
    } finally {
      process.umask(old);
    }
  });

  it('narrows an existing file that was wider', async () => {
    const path = join(dir, 'wide.jsonl');
    writeFileSync(path, '', { mode: 0o644 });
    const t = new ClientTrail(dir, 'wide');
    t.append({ tool: 'observe', args: {}, resultChars: 1, ms: 1 });
    await t.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('cuts long arguments to the bound', async () => {
    const t = new ClientTrail(dir, 'long', { maxArgChars: 50 });
    t.append({ tool: 'configure', args: { text: 'x'.repeat(10_000) }, resultChars: 1, ms: 1 });
    await t.close();
    const [l] = lines(t.path);
    expect(typeof l!.args).toBe('string');
    expect((l!.args as string).length).toBeLessThan(80);
    expect(l!.args).toMatch(/…\(\d+ chars\)$/);
  });

  it('rotates at the size bound, keeping one older file', async () => {
    const t = new ClientTrail(dir, 'rot', { maxBytes: 1000 });
    for (let i = 0; i < 60; i++) {
      t.append({ tool: 'observe', args: { i }, resultChars: i, ms: 1 });
      // one write in flight at a time: flushing between calls makes each line its own write
      await t.flush();
    }
    await t.close();
    expect(statSync(t.path).size).toBeLessThanOrEqual(1000);
    expect(statSync(`${t.path}.1`).size).toBeLessThanOrEqual(1000);
    expect(existsSync(`${t.path}.2`)).toBe(false);
    expect(statSync(`${t.path}.1`).mode & 0o777).toBe(0o600);
    // the newest lines are in the live file, the ones before them in .1, in order
    const all = [...lines(`${t.path}.1`), ...lines(t.path)].map((l) => (l.args as { i: number }).i);
    expect(all.at(-1)).toBe(59);
    expect(all).toEqual([...all].sort((a, b) => a - b));
  });

  it('drops lines past the pending bound instead of growing', async () => {
    const t = new ClientTrail(dir, 'busy', { maxPendingBytes: 500 });
    for (let i = 0; i < 100; i++) t.append({ tool: 'observe', args: { i }, resultChars: 1, ms: 1 });
    await t.close();
    expect(t.dropped).toBeGreaterThan(0);
    expect(lines(t.path).length + t.dropped).toBe(100);
  });

  it('a write error turns the trail off without throwing', async () => {
    // the folder the trail needs is a file: mkdir fails
    const blocked = join(dir, 'blocked');
    writeFileSync(blocked, 'not a folder');
    const t = new ClientTrail(blocked, 'x');
    t.append({ tool: 'observe', args: {}, resultChars: 1, ms: 1 });
    await t.flush();
    t.append({ tool: 'observe', args: {}, resultChars: 1, ms: 1 });
    await t.close();
    expect(t.dropped).toBe(1);
  });

  it('refuses a client id that could not be a file name; the book skips it', async () => {
    expect(() => new ClientTrail(dir, '../escape')).toThrow(/cannot name a trail file/);
    const book = new TrailBook(dir);
    book.append('../escape', { tool: 'observe', args: {}, resultChars: 1, ms: 1 });
    book.append('ok-id', { tool: 'observe', args: {}, resultChars: 1, ms: 1 });
    await book.close();
    expect(lines(join(dir, 'ok-id.jsonl'))).toHaveLength(1);
    expect(book.get('../escape')).toBeUndefined();
  });
});
