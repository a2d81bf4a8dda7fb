/**
 * The fast pre-filter must never say "clean" where the TRIGGER regex (the specification) says
 * "maybe": checked on the corpus, on seeded random strings made of the fragments secrets are
 * made of, and for the batch form against the per-string form.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../fixtures/shm-gen.js';
import { TRIGGER } from '../../../src/domain/redaction/rules.js';
import { markTriggered, mayTrigger } from '../../../src/domain/redaction/trigger.js';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
import { TEXT_FIELDS } from '../../../src/domain/redaction/engine.js';
import type { Kind } from '../../../src/domain/kinds.js';
import { carry, loadCorpus } from '../../helpers/redaction-carry.js';

const corpus = loadCorpus();

const rnd = mulberry32(7);
const pick = <T,>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;

const FRAGMENTS = [
  'key', 'Key', 'KEY', 'kEy', 'secret', 'SECRET', 'token', 'Token', 'passw', 'PASSP', 'pwd', 'auth', 'AUTH', 'cred', 'sess', 'Sid', 'jwt', 'OTP', 'cookie',
  'api_', 'x-', 'my.', '$', ':', '=', ' ', '  ', '\t', '\n', '"', "'", '\\', '\\\\', '\\"', '/', '//', '://', '@', 'https', 'http', 'wss', 'user', 'pw',
  'PRIVATE KEY', 'PRIVATE', ' KEY', 'eyJ', 'ey', 'J', 'Bearer ', 'bearer', 'BEARER ', 'Basic ', 'basic', 'BASIC ', 'AKIA', 'ASIA', 'AIDA', 'ABCDEFGHIJ', '0123456789', 'XYZ',
  'ghp_', 'gho', '_', 'github_pat_', 'github_pat', 'glpat-', 'glpat', 'xoxb-', 'xox', 'b-', 'hooks.slack', 'hooks', '.slack', 'sk_live_', 'rk_test_', 'k_live', 'sk-', 'sk', '-',
  'AIza', 'AI', 'za', 'npm_', 'npm', 'SG.', 'SG', '.', '4111', '1111', '5500 0000', '-0000', '2', '7', '42', 'abc', 'é', 'İ', '\u00a0', '\u2028', 'x'.repeat(25),
  // issue 20: short password words, secret-ish names, name=value pairs, Oracle's user/password@
  'pin', 'PIN', 'pw', 'Psw', 'sig', 'SIG', 'appid', 'HMAC', '?', '&', ';', '%2B', 'A1b2C3d4E5f6G7h8I9j0K1', 'Zq8mN3xV7bL2', 'jdbc:oracle:thin:', 'jdbc:oracle:', 'scott', 'tiger',
  // issue 17: the pieces the hand-read branches are found from (hooks.slack by "ks.sl", AWS ids by 'A', ws(s):// colons)
  'hoo', 'ks.sl', 'ks.slack', 'hooks.sl', 'ack', 'wss', 'ws', 'wss://', 'AKIA', 'ASIA', 'ASIAQ', 'A', 'K', 'I', 'ABCDEFGHIJKLMNOP', '0123456789ABCDEF',
];

function randomText(): string {
  let s = '';
  const n = 1 + Math.floor(rnd() * 14);
  for (let i = 0; i < n; i++) s += pick(FRAGMENTS);
  return s;
}

describe('the fast trigger', () => {
  it('fires on every corpus line the TRIGGER regex fires on', () => {
    const missed = corpus.filter((l) => TRIGGER.test(l.text) && !mayTrigger(l.text)).map((l) => l.text);
    expect(missed).toEqual([]);
  });

  it('is a superset of TRIGGER on 50 000 random strings made of secret fragments', () => {
    const missed: string[] = [];
    let fired = 0;
    for (let i = 0; i < 50_000; i++) {
      const s = randomText();
      if (TRIGGER.test(s)) {
        fired++;
        if (!mayTrigger(s)) missed.push(s);
      }
    }
    expect(missed.slice(0, 5)).toEqual([]);
    // the generator must actually exercise the branches, or this test proves nothing
    expect(fired).toBeGreaterThan(10_000);
  });

  it('marks in a batch every record the per-string form marks, whatever its neighbours hold', () => {
    for (let round = 0; round < 300; round++) {
      const texts = Array.from({ length: 1 + Math.floor(rnd() * 40) }, () => (rnd() < 0.7 ? 'plain words https://cdn.example.test/app.js:12:3 id=7' : randomText()));
      const starts: number[] = [];
      let at = 0;
      for (const t of texts) {
        starts.push(at);
        at += t.length + 1;
      }
      const hit = new Uint8Array(texts.length);
      markTriggered(texts.join('\n'), starts, hit);
      texts.forEach((t, i) => {
        if (mayTrigger(t)) expect(hit[i], JSON.stringify(t)).toBe(1);
      });
    }
  });

  it('lets the engine skip only records the rules would leave unchanged', () => {
    const engine = compileRedaction();
    const byKind = new Map<Kind, Array<Record<string, unknown>>>();
    for (const l of corpus) {
      const [kind, rec] = carry(l);
      const list = byKind.get(kind) ?? [];
      list.push(rec);
      byKind.set(kind, list);
    }
    for (const [kind, recs] of byKind) {
      const hit = engine.triggered(kind, recs);
      recs.forEach((rec, i) => {
        if (hit[i] === 1) return;
        const before = JSON.stringify(rec);
        expect(JSON.stringify(engine.redactRecord(kind, structuredClone(rec))), before).toBe(before);
      });
      // and it does skip: the look-alikes are most of what it lets through
      expect(hit.some((h) => h === 0) || recs.length < 5).toBe(true);
    }
  });

  // the branches read by hand (issue 17): where they start and end, at the edges of the text and of a record
  it('finds hooks.slack and AWS key ids at the very start and end of the text, and not one character short', () => {
    const aws = 'AKIAABCDEFGHIJKLMNOP';
    for (const s of ['hooks.slack', 'hooks.slack.com/services/x', `x ${'é'.repeat(3)}hooks.slack`, aws, `${'ü'.repeat(5)}${aws}`, `id=${aws}é`, `ASIA${'Z'.repeat(16)}`, `AGIA${'0'.repeat(16)}`]) {
      expect(TRIGGER.test(s), s).toBe(true);
      expect(mayTrigger(s), s).toBe(true);
    }
    // one character short of the pattern, or a character outside its class: neither fires
    for (const s of ['ooks.slack', 'hooks.slac', aws.slice(0, -1), `AKIAABCDEFGHIJKLMNOé`, 'AKIAabcdefghijklmnop', 'AXIAABCDEFGHIJKLMNOP']) {
      expect(TRIGGER.test(s), s).toBe(false);
      expect(mayTrigger(s), s).toBe(false);
    }
  });

  it('marks the record holding a hand-read match when it sits at a record boundary or in a very long text', () => {
    const aws = 'AKIAABCDEFGHIJKLMNOP';
    const texts = ['plain', 'hooks.slack', 'x', aws, `${'word '.repeat(20_000)}${aws}`, `${'https://cdn.example.test/a '.repeat(5000)}hooks.slack`, 'wss://rt.example.test/socket', `wss://u:${'p'.repeat(8)}@rt.example.test/`];
    const starts: number[] = [];
    let at = 0;
    for (const t of texts) {
      starts.push(at);
      at += t.length + 1;
    }
    const hit = new Uint8Array(texts.length);
    markTriggered(texts.join('\n'), starts, hit);
    expect([...hit]).toEqual(texts.map((t) => (mayTrigger(t) ? 1 : 0)));
    expect([...hit]).toEqual([0, 1, 0, 1, 1, 1, 0, 1]);
  });

  it('gathers every text field of every kind: a secret in any one of them marks its record', () => {
    const engine = compileRedaction();
    for (const [kind, fields] of Object.entries(TEXT_FIELDS) as Array<[Kind, readonly string[]]>) {
      // one record per field, the secret in that field alone (as a string, and inside an object)
      const recs = fields.flatMap((f) => [{ ts: 1, [f]: 'token=abcdefghijklmnopqrstuvwxyz' }, { ts: 1, [f]: { note: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789' } }, { ts: 1, [f]: 'nothing to see here' }]);
      const hit = engine.triggered(kind, recs);
      recs.forEach((r, i) => {
        expect(hit[i], `${kind} ${JSON.stringify(r)}`).toBe(i % 3 === 2 ? 0 : 1);
      });
    }
  });

  // a key is gathered only when its own text may hold a secret (issue 17): most keys are names
  it('marks a record whose key is a secret, and one whose key names a secret value, and not one of plain names', () => {
    const engine = compileRedaction();
    const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    const recs = [
      { ts: 1, message: 'm', args: ['x', { [token]: 1 }] },
      { ts: 1, message: 'm', args: ['x', { password: 'hunter2' }] },
      { ts: 1, message: 'm', args: ['x', { apiKey: 'Zx81Qp3mWv7Lr2Tn' }] },
      { ts: 1, message: 'm', args: ['x', { note: token }] },
      { ts: 1, message: 'm', args: ['x', { id: 7, ok: true, test_id: 'btn-save', role: 'button' }] },
    ];
    expect([...engine.triggered('logs', recs)]).toEqual([1, 1, 1, 1, 0]);
    const out = engine.redactRecord('logs', structuredClone(recs[0]!)) as { args: unknown[] };
    expect(out.args[1]).toEqual({ '[REDACTED:github_token]': 1 });
  });

  it('redacts secrets that are keys, at ingest and at egress, keeping two that become the same label apart', () => {
    const engine = compileRedaction();
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijklmnop';
    const jwt2 = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIyIn0.qrstuvwxyzabcdef';
    const v = engine.redactValue({ sessions: { [jwt]: { user: 1 }, [jwt2]: { user: 2 } }, plain: 1 }) as Record<string, Record<string, unknown>>;
    expect(v.sessions).toEqual({ '[REDACTED:jwt]': { user: 1 }, '[REDACTED:jwt] #2': { user: 2 } });
    expect(v.plain).toBe(1);
    expect(JSON.stringify(v)).not.toContain('eyJ');
    // a key named like a secret but holding none is kept as it is, with its value's own rule
    expect(engine.redactValue({ password: 'hunter2', token_count: 3 })).toEqual({ password: '[REDACTED:keyed_secret]', token_count: 3 });
  });

  it('answers the same for a key remembered, one past the bound of remembered keys, and one too long to keep', () => {
    const engine = compileRedaction();
    const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    // 5 000 distinct keys (past the 4 096 kept), then the token key again: still redacted
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`field_${i}`, i]));
    engine.redactValue(many);
    for (let round = 0; round < 2; round++) {
      expect(engine.redactValue({ [token]: 1 }), `round ${round}`).toEqual({ '[REDACTED:github_token]': 1 });
      const long = `${'x'.repeat(300)} ${token}`;
      expect(Object.keys(engine.redactValue({ [long]: 1 }) as object)[0], `round ${round}`).toBe(`${'x'.repeat(300)} [REDACTED:github_token]`);
    }
  });

  it('redacts a header name that is a secret, and keeps a header named __proto__ a header', () => {
    const engine = compileRedaction();
    const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    const headers = JSON.parse(`{"X-Request-Id":"req-1","${token}":"1","__proto__":"kept"}`) as Record<string, unknown>;
    const recs = [{ ts: 1, url: 'https://a.test/', request_headers: headers }];
    expect([...engine.triggered('network_bodies', recs)]).toEqual([1]);
    const out = engine.redactRecord('network_bodies', structuredClone(recs[0]!)) as { request_headers: Record<string, unknown> };
    expect(JSON.stringify(out.request_headers)).toBe('{"X-Request-Id":"req-1","[REDACTED:github_token]":"1","__proto__":"kept"}');
  });

  // the keyword branch is found by its first two letters read backwards from the ':' or '='
  it('finds every keyword of the key/value branch in any case, at the start of the text and 24 characters before the separator', () => {
    const words = ['key', 'secret', 'token', 'pass', 'pw', 'psw', 'pin', 'auth', 'cred', 'sess', 'sid', 'sig', 'jwt', 'otp', 'cookie', 'appid', 'hmac'];
    for (const w of words) {
      for (const form of [w, w.toUpperCase(), w[0]!.toUpperCase() + w.slice(1)]) {
        for (const s of [`${form}:`, `${form}=`, `x.${form}${'_'.repeat(24)}:`, `"${form}"  :`, `a ${form}\\"=`]) {
          expect(TRIGGER.test(s), s).toBe(true);
          expect(mayTrigger(s), s).toBe(true);
        }
        // 25 characters between the keyword and the separator: the branch does not reach
        const far = `${form}${'_'.repeat(25)}:`;
        expect(TRIGGER.test(far), far).toBe(false);
        expect(mayTrigger(far), far).toBe(false);
      }
    }
  });

  // a URL's scheme before its ':' is skipped (no keyword is in "https"), unless the scheme is the end of a longer id
  it('skips a URL scheme only where it is not the tail of a keyed id', () => {
    for (const scheme of ['https', 'http', 'wss', 'ws']) {
      for (const s of [`${scheme}://a.test/`, ` ${scheme}://a.test/`, `x=1&u=${scheme}://a.test/`]) {
        expect(TRIGGER.test(s), s).toBe(false);
        expect(mayTrigger(s), s).toBe(false);
      }
      for (const s of [`token${scheme}://a.test/`, `pass_${scheme}://a.test/`, `SECRET.${scheme}://a.test/`, `x ${scheme}.key://a.test/`]) {
        expect(TRIGGER.test(s), s).toBe(true);
        expect(mayTrigger(s), s).toBe(true);
      }
    }
  });
});
