/**
 * The client registry (#16 items 4–5) in-process, with an injected clock: the client limit,
 * TTL purge of memory and file, the saved state round-trip, damaged and oversized files set
 * aside, the size bound, the store epoch, and global noise rules.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CLIENT_FILE } from '../../../src/clients/client-file.js';
import { ClientRegistry, type RegistryOptions } from '../../../src/clients/registry.js';
import { KIND_COUNT } from '../../../src/domain/kinds.js';
import { GasolineError } from '../../../src/errors.js';

const dirs: string[] = [];
const regs: ClientRegistry[] = [];
afterEach(() => {
  for (const r of regs.splice(0)) r.shutdown();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gasoline-clients-'));
  dirs.push(d);
  return d;
}

function registry(o: RegistryOptions): ClientRegistry {
  const r = new ClientRegistry(o);
  regs.push(r);
  return r;
}

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof GasolineError ? e.code : String(e);
  }
};

describe('ClientRegistry', () => {
  it('refuses a client beyond max with client_limit only while every slot has a session open', () => {
    const dir = tempDir();
    const r = registry({ dir, max: 2 });
    r.open('a');
    r.open('b');
    expect(codeOf(() => r.open('c'))).toBe('client_limit');
    expect(codeOf(() => r.get('c'))).toBe('client_limit');
    // a's session ends: its slot can be freed (a is saved first, so it comes back as it was)
    r.get('a').addCheckpoint('kept', new Array<number>(KIND_COUNT).fill(3));
    r.close('a');
    r.open('c');
    expect(r.list().map((c) => c.id).sort()).toEqual(['b', 'c']);
    r.close('b');
    expect(r.get('a').checkpoints.get('kept')?.ords[0]).toBe(3);
  });

  it('counts sessions per client and lists them with connected_at, last_seen and cursor lag per kind', () => {
    let now = 1_000_000;
    const r = registry({ now: () => now });
    r.open('a');
    now += 5000;
    r.open('a');
    const a = r.get('a');
    a.cursors[0] = 4;
    const reader = { latestOrd: (k: number) => (k === 0 ? 10 : 2), tailOrd: () => 0 };
    const [info] = r.list(reader);
    expect(info).toMatchObject({ id: 'a', sessions: 2, connected_at: new Date(1_000_000).toISOString(), last_seen: new Date(now).toISOString(), cursor_lag_max: 6 });
    expect(info!.cursor_lag.logs).toBe(6);
    expect(info!.cursor_lag.network).toBe(2);
    r.close('a');
    r.close('a');
    r.close('a'); // an extra close is ignored
    expect(r.list()[0]).toMatchObject({ sessions: 0, connected_at: null });
  });

  it('purges a client unseen for the TTL, from memory and disk, but never one with a session open', () => {
    const dir = tempDir();
    let now = 1_000_000;
    const r = registry({ dir, ttlMs: 60_000, now: () => now });
    r.get('idle').storeSet('k', 'v');
    r.open('busy');
    const file = join(dir, 'clients', 'idle.json');
    expect(existsSync(file)).toBe(true);
    now += 60_001;
    r.sweep();
    expect(r.list().map((c) => c.id)).toEqual(['busy']);
    expect(existsSync(file)).toBe(false);
    expect(r.get('idle').store.size).toBe(0);
  });

  it('purges saved files older than the TTL that no client in memory holds (e.g. from before a restart)', () => {
    const dir = tempDir();
    const first = registry({ dir });
    first.get('old').storeSet('k', 'v');
    first.shutdown();
    let now = Date.now();
    const r = registry({ dir, ttlMs: 60_000, now: () => now });
    r.sweep();
    expect(existsSync(join(dir, 'clients', 'old.json'))).toBe(true);
    now += 61_000;
    r.sweep();
    expect(existsSync(join(dir, 'clients', 'old.json'))).toBe(false);
  });

  it('saves a client and restores all of its durable state in a new registry on the same dir (same epoch)', () => {
    const dir = tempDir();
    const one = registry({ dir, epoch: 'e1' });
    const a = one.open('a');
    a.cursors[1] = 7;
    a.summaryCursors[2] = 5;
    a.addCheckpoint('before-fix', [1, 2, 3, 4, 5, 6, 7].slice(0, KIND_COUNT));
    const rule = a.addNoise('message', 'heartbeat');
    a.removeNoise('n1'); // a default removed stays removed
    a.setTabFilter({ url: 'localhost:3000' });
    a.setStreaming({ enabled: true, events: ['errors'], throttle_seconds: 2, url_filter: null, severity_min: 'error' });
    a.storeSet('__proto__', 'note');
    one.close('a');
    const file = join(dir, 'clients', 'a.json');
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');

    const two = registry({ dir, epoch: 'e1' });
    const b = two.open('a');
    expect(b.cursors[1]).toBe(7);
    expect(b.summaryCursors[2]).toBe(5);
    expect(b.checkpoints.get('before-fix')).toMatchObject({ ords: [1, 2, 3, 4, 5, 6, 7].slice(0, KIND_COUNT) });
    expect(b.checkpoints.get('before-fix')!.restarted).toBeUndefined();
    expect(b.noise.map((r) => r.id)).toEqual(a.noise.map((r) => r.id));
    expect(b.noise.find((r) => r.id === rule.id)?.pattern).toBe('heartbeat');
    expect(b.tabFilter).toEqual({ url: 'localhost:3000' });
    expect(b.streaming).toMatchObject({ enabled: true, events: ['errors'], throttle_seconds: 2 });
    expect(b.store.get('__proto__')).toBe('note');
    // a new rule does not reuse a saved id
    expect(b.addNoise('url', 'x').id).not.toBe(rule.id);
  });

  it('under another epoch (a restarted daemon, empty rings) resets cursors and makes checkpoints "before this daemon"', () => {
    const dir = tempDir();
    const one = registry({ dir, epoch: 'old' });
    const a = one.open('a');
    a.cursors.fill(900);
    a.addCheckpoint('cp', new Array<number>(KIND_COUNT).fill(800));
    one.shutdown();
    const b = registry({ dir, epoch: 'new' }).open('a');
    expect(b.cursors.every((c) => c === 0)).toBe(true);
    expect(b.checkpoints.get('cp')).toMatchObject({ ords: new Array<number>(KIND_COUNT).fill(0), restarted: true });
  });

  it('sets a corrupt file aside as .bad and starts the client fresh, without throwing', () => {
    const dir = tempDir();
    registry({ dir }).get('x').storeSet('k', 'v');
    const file = join(dir, 'clients', 'x.json');
    writeFileSync(file, '{"v":1,"id":"x", broken');
    const s = registry({ dir }).get('x');
    expect(s.store.size).toBe(0);
    expect(existsSync(`${file}.bad`)).toBe(true);
    expect(readFileSync(`${file}.bad`, 'utf8')).toContain('broken');
  });

  it('sets aside a file that fails the schema or belongs to another id', () => {
    const dir = tempDir();
    registry({ dir }).get('y').storeSet('k', 'v');
    const file = join(dir, 'clients', 'y.json');
    const good = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...good, id: 'z' }));
    expect(registry({ dir }).get('y').store.size).toBe(0);
    expect(existsSync(`${file}.bad`)).toBe(true);
  });

  it('sets an oversized file aside unread', () => {
    const dir = tempDir();
    registry({ dir }).get('big').storeSet('k', 'v');
    const file = join(dir, 'clients', 'big.json');
    writeFileSync(file, 'x'.repeat(MAX_CLIENT_FILE + 1));
    expect(registry({ dir }).get('big').store.size).toBe(0);
    expect(existsSync(`${file}.bad`)).toBe(true);
  });

  it('bounds the store: a set past its total size is refused with limit_reached and nothing changes', () => {
    const r = registry({ dir: tempDir() });
    const s = r.get('s');
    for (let i = 0; i < 3; i++) s.storeSet(`k${i}`, 'v'.repeat(65_536));
    expect(codeOf(() => s.storeSet('k3', 'v'.repeat(65_536)))).toBe('limit_reached');
    expect(s.store.size).toBe(3);
    // replacing a value counts its new size, not both
    s.storeSet('k0', 'small');
    s.storeSet('k3', 'v'.repeat(65_536));
    expect(s.store.size).toBe(4);
  });

  it('does not save a client whose id is no safe file name', () => {
    const dir = tempDir();
    const r = registry({ dir });
    r.get('../escape').storeSet('k', 'v');
    r.get('..').storeSet('k', 'v');
    expect(existsSync(join(dir, 'escape.json'))).toBe(false);
    expect(existsSync(join(dir, 'clients', '...json'))).toBe(false);
  });

  it('global noise rules apply to every client, list as global, may be removed by any client, and are saved', () => {
    const dir = tempDir();
    const r = registry({ dir });
    const a = r.get('a');
    const b = r.get('b');
    const g = a.addGlobalNoise('message', 'ResizeObserver loop');
    expect(g.id).toMatch(/^g/);
    expect(b.noise.find((x) => x.id === g.id)?.global).toEqual({ by: 'a' });
    expect(b.noisy({ message: 'ResizeObserver loop limit exceeded' })?.id).toBe(g.id);
    r.shutdown();
    const again = registry({ dir });
    const c = again.get('c');
    expect(c.noise.find((x) => x.id === g.id)?.pattern).toBe('ResizeObserver loop');
    expect(c.removeNoise(g.id)).toBe(true);
    expect(again.get('a').noise.some((x) => x.id === g.id)).toBe(false);
    expect(registry({ dir }).get('d').noise.some((x) => x.global)).toBe(false);
  });

  it('debounces saves after a change and writes on close', async () => {
    const dir = tempDir();
    const r = registry({ dir, saveDelayMs: 20 });
    const s = r.open('d');
    s.addCheckpoint('one', new Array<number>(KIND_COUNT).fill(1));
    const file = join(dir, 'clients', 'd.json');
    const { waitFor } = await import('../../helpers/wait-for.js');
    await waitFor('the debounced save', () => existsSync(file) && readFileSync(file, 'utf8').includes('"one"'));
    s.cursors[0] = 42;
    r.close('d');
    expect((JSON.parse(readFileSync(file, 'utf8')) as { cursors: number[] }).cursors[0]).toBe(42);
  });

  it('shutdown is idempotent and leaves no timer holding the process', () => {
    const r = registry({ dir: tempDir() });
    r.get('a');
    r.shutdown();
    r.shutdown();
  });
});
