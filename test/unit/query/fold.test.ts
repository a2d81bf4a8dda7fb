/** Issue 8: what folds together, what never does, and the bound on the fold map. */
import { describe, expect, it } from 'vitest';
import { kindId } from '../../../src/domain/kinds.js';
import { foldKey, severity } from '../../../src/query/fold-key.js';
import { bySeverityThenNewest, Folder } from '../../../src/query/fold.js';
import type { Hit } from '../../../src/query/scan.js';

const logs = kindId('logs');
const net = kindId('network');
const ws = kindId('ws_events');
let seq = 0;
const hit = (kind: number, rec: Record<string, unknown>, t = 1000): Hit => ({ seq: seq++, ord: seq, kind, recvTime: t, clientTime: t, tab: 1, rec });

describe('foldKey', () => {
  it('folds messages that differ only in numbers, ids, hashes, UUIDs, timestamps and quoted values', () => {
    const a = foldKey(logs, { level: 'error', type: 'console', message: 'order 4711 for user "ann" failed at 2026-11-23T10:00:01Z id 3f2a9c1b7e4d5a6b trace 123e4567-e89b-12d3-a456-426614174000' });
    const b = foldKey(logs, { level: 'error', type: 'console', message: "order 12 for user \"bob\" failed at 2026-01-02T03:04:05.123+02:00 id deadbeefcafe0123 trace 00000000-1111-2222-3333-444444444444" });
    expect(a).toBe(b);
    expect(foldKey(logs, { level: 'error', type: 'console', message: 'order 12 was refunded' })).not.toBe(a);
  });

  it('keeps levels apart: a warning never hides inside an error count', () => {
    expect(foldKey(logs, { level: 'warn', type: 'console', message: 'x 1' })).not.toBe(foldKey(logs, { level: 'error', type: 'console', message: 'x 2' }));
  });

  it('exceptions: message plus top frame', () => {
    const at = (file: string) => `TypeError: x\n    at f (http://app.test/${file}:10:5)`;
    const e = (file: string) => foldKey(logs, { level: 'error', type: 'exception', message: 'TypeError: x', stack: at(file) });
    expect(e('a.js')).toBe(e('a.js'));
    expect(e('a.js')).not.toBe(e('b.js'));
  });

  it('network: method + path template + status, whatever the ids and query', () => {
    const k = (url: string, status: number, method = 'GET') => foldKey(net, { method, url, status });
    expect(k('http://api.test/orders/17?x=1', 500)).toBe(k('http://api.test/orders/9342', 500));
    expect(k('http://api.test/orders/17', 500)).not.toBe(k('http://api.test/orders/17', 502));
    expect(k('http://api.test/orders/17', 500)).not.toBe(k('http://api.test/orders/17', 500, 'POST'));
    expect(k('http://api.test/orders/17', 500)).not.toBe(k('http://api.test/users/17', 500));
  });

  it('ranks what breaks the page above chatter', () => {
    expect(severity(logs, { type: 'exception', level: 'error' })).toBe(4);
    expect(severity(logs, { type: 'network', level: 'error', status: 404 })).toBe(3);
    expect(severity(logs, { type: 'console', level: 'error' })).toBe(3);
    expect(severity(logs, { type: 'console', level: 'info' })).toBe(1);
    expect(severity(net, { status: 200 })).toBe(1);
    expect(severity(net, { status: 0 })).toBe(4);
    expect(severity(ws, { event: 'close', code: 1006 })).toBe(3);
    expect(severity(ws, { event: 'close', code: 1000 })).toBe(1);
  });
});

describe('Folder', () => {
  it('counts, keeps first and last seen and the newest example', () => {
    const f = new Folder(true);
    for (let i = 0; i < 40; i++) f.add(hit(logs, { level: 'error', type: 'console', message: `failed ${i}` }, 1000 + i));
    f.add(hit(logs, { level: 'info', type: 'console', message: 'hello' }, 5000));
    const [g, other] = f.groups();
    expect(f.records).toBe(41);
    expect(f.size).toBe(2);
    expect(g).toMatchObject({ count: 40, firstTime: 1000, lastTime: 1039, severity: 3 });
    expect(g!.example.rec.message).toBe('failed 39');
    expect([other!, g!].sort(bySeverityThenNewest)[0]).toBe(g);
  });

  it('is bounded: a new signature past the bound is refused, repeats of known ones still count', () => {
    const f = new Folder(true, 3);
    for (const m of ['alpha', 'beta', 'gamma']) expect(f.add(hit(logs, { level: 'error', message: m }))).toBe(true);
    expect(f.add(hit(logs, { level: 'error', message: 'delta' }))).toBe(false);
    expect(f.add(hit(logs, { level: 'error', message: 'beta' }))).toBe(true);
    expect(f.records).toBe(4);
    expect(f.size).toBe(3);
  });

  it('fold:false keeps each record on its own line', () => {
    const f = new Folder(false);
    for (let i = 0; i < 5; i++) f.add(hit(logs, { level: 'error', message: 'same' }));
    expect(f.size).toBe(5);
  });
});
