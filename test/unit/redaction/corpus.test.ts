/**
 * The redaction corpus (test/fixtures/redaction-corpus.jsonl, made by redaction-corpus-gen.mjs):
 * each line goes through `redactRecord` in the record field it would arrive in. Bar: zero
 * leaks (neither the secret nor any 12-character window of it survives), over-redaction of
 * look-alikes ≤ 2 %. Prints recall per class and carrier.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileRedaction } from '../../../src/domain/redaction/index.js';
import type { Kind } from '../../../src/domain/kinds.js';

interface Line {
  carrier: 'header' | 'url' | 'json_body' | 'text_body' | 'console_arg' | 'ws_frame';
  class: string;
  text: string;
  secret?: string;
  lookalike?: boolean;
}

const corpus: Line[] = readFileSync(fileURLToPath(new URL('../../fixtures/redaction-corpus.jsonl', import.meta.url)), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Line);

/** The record a line arrives in, and the field it is carried by. */
export function carry(l: Line): [Kind, Record<string, unknown>, string] {
  switch (l.carrier) {
    case 'header': {
      const at = l.text.indexOf(': ');
      return ['network_bodies', { url: 'https://app.example.test/api', request_headers: { Accept: 'application/json', [l.text.slice(0, at)]: l.text.slice(at + 2) }, content_type: 'application/json' }, 'request_headers'];
    }
    case 'url':
      return ['network', { url: l.text, page_url: 'https://app.example.test/', error: '' }, 'url'];
    case 'json_body':
      return ['network_bodies', { url: 'https://app.example.test/api', request_body: l.text, content_type: 'application/json' }, 'request_body'];
    case 'text_body':
      return ['network_bodies', { url: 'https://app.example.test/debug', response_body: l.text, content_type: 'text/html' }, 'response_body'];
    case 'console_arg':
      return ['logs', { message: 'console.log', args: JSON.parse(l.text) as unknown[], stack: '', url: 'https://app.example.test/', source: 'console' }, 'args'];
    case 'ws_frame':
      return ['ws_events', { url: 'wss://app.example.test/socket', data: l.text, reason: '' }, 'data'];
  }
}

function leaks(out: string, secret: string): string | null {
  if (out.includes(secret)) return secret;
  for (let i = 0; i + 12 <= secret.length; i++) {
    const w = secret.slice(i, i + 12);
    if (out.includes(w)) return w;
  }
  return null;
}

describe('redaction corpus', () => {
  const engine = compileRedaction();
  const secrets = corpus.filter((l) => !l.lookalike);
  const looks = corpus.filter((l) => l.lookalike);

  it('is big enough and balanced: ≥ 150 lines, two thirds secrets, six carriers', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(150);
    expect(secrets.length / corpus.length).toBeGreaterThanOrEqual(0.6);
    expect(looks.length / corpus.length).toBeGreaterThanOrEqual(0.3);
    expect(new Set(corpus.map((l) => l.carrier)).size).toBe(6);
  });

  it('leaks nothing, and prints recall per class and carrier', () => {
    const table = new Map<string, Record<string, string>>();
    const failures: string[] = [];
    for (const l of secrets) {
      const [kind, rec, field] = carry(l);
      const before = JSON.stringify(rec[field]);
      const out = JSON.stringify(engine.redactRecord(kind, rec));
      const leaked = leaks(out, l.secret!) ?? leaks(out, JSON.stringify(l.secret!).slice(1, -1));
      const row = table.get(l.class) ?? {};
      row[l.carrier] = leaked ? 'LEAK' : 'ok';
      table.set(l.class, row);
      if (leaked) failures.push(`${l.class}/${l.carrier}: "${leaked}" survived in ${out} (was ${before})`);
    }
    const rows = [...table].map(([cls, r]) => ({ class: cls, ...r }));
    process.stdout.write(`\nredaction recall (${secrets.length} secret lines)\n`);
    console.table(rows);
    const hits = secrets.length - failures.length;
    process.stdout.write(`recall ${hits}/${secrets.length}\n`);
    expect(failures).toEqual([]);
  });

  it('leaves look-alikes alone (over-redaction ≤ 2 %)', () => {
    const over: string[] = [];
    for (const l of looks) {
      const [kind, rec, field] = carry(l);
      const before = JSON.stringify(rec[field]);
      const after = JSON.stringify(engine.redactRecord(kind, structuredClone(rec))[field]);
      if (before !== after) over.push(`${l.class}/${l.carrier}: ${before} → ${after}`);
    }
    process.stdout.write(`over-redaction ${over.length}/${looks.length}${over.length ? `\n  ${over.join('\n  ')}` : ''}\n`);
    expect(over.length / looks.length).toBeLessThanOrEqual(0.02);
  });

  it('finds the same secrets through redactValue (egress) and redactText', () => {
    for (const l of secrets) {
      const [, rec] = carry(l);
      const out = JSON.stringify(engine.redactValue(rec));
      expect(leaks(out, l.secret!), `${l.class}/${l.carrier}`).toBeNull();
    }
  });
});
