import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bearerMatches, CLIENT_ID_RE, readDaemonToken, tokenPath, writeDaemonToken } from '../../../src/daemon/contract.js';

describe('the bridge ↔ daemon contract', () => {
  const dirs: string[] = [];
  const dir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'gasoline-contract-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a daemon token is 0600, fresh at every start, and read back by the bridge', () => {
    const d = dir();
    const a = writeDaemonToken(d, 7890);
    expect(statSync(tokenPath(d, 7890)).mode & 0o777).toBe(0o600);
    expect(readDaemonToken(d, 7890)).toBe(a);
    const b = writeDaemonToken(d, 7890);
    expect(b).not.toBe(a);
    expect(readDaemonToken(d, 7890)).toBe(b);
    // another port's daemon has its own token, and none is there yet
    expect(readDaemonToken(d, 7891)).toBeNull();
  });

  it('a token file that is not a token reads as none', () => {
    const d = dir();
    writeFileSync(tokenPath(d, 7890), 'not-a-token\n');
    expect(readDaemonToken(d, 7890)).toBeNull();
  });

  it('only "Bearer <the token>" matches', () => {
    const t = 'ab'.repeat(32);
    expect(bearerMatches(`Bearer ${t}`, t)).toBe(true);
    expect(bearerMatches(`Bearer ${'ac'.repeat(32)}`, t)).toBe(false);
    expect(bearerMatches(t, t)).toBe(false);
    expect(bearerMatches(`bearer ${t}`, t)).toBe(false);
    expect(bearerMatches(`Bearer ${t.slice(2)}`, t)).toBe(false);
    expect(bearerMatches('', t)).toBe(false);
  });

  it('client ids are short and inert', () => {
    expect(CLIENT_ID_RE.test('cwd-0123456789ab')).toBe(true);
    for (const bad of ['', '../x', 'a/b', 'a b', 'x'.repeat(65), 'é']) expect(CLIENT_ID_RE.test(bad), bad).toBe(false);
  });
});
