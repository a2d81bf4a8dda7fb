/**
 * The redaction corpus (test/fixtures/redaction-corpus.jsonl, made by redaction-corpus-gen.mjs):
 * each line goes through `redactRecord` in the record field it would arrive in. Bar: zero
 * leaks (neither the secret nor any 12-character window of it survives), over-redaction of
 * look-alikes ≤ 2 %. Prints recall per class and carrier.
 */
import { describe, expect, it } from 'vitest';
import { compileRedaction } from '../../../src/domain/redaction/index.js';

import { carry, loadCorpus } from '../../helpers/redaction-carry.js';

const corpus = loadCorpus();

/** the secret, its JSON-escaped and its %-encoded forms: a leak in any of them is a leak */
function leaksAny(out: string, secret: string): string | null {
  return leaks(out, secret) ?? leaks(out, JSON.stringify(secret).slice(1, -1)) ?? leaks(out, encodeURIComponent(secret));
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

  it('holds every class issue 20 item 1 names, each in every carrier it travels in, and look-alikes of each kind', () => {
    const carriers = (cls: string): Set<string> => new Set(corpus.filter((l) => l.class === cls).map((l) => l.carrier));
    const all = ['header', 'url', 'json_body', 'text_body', 'console_arg', 'ws_frame'];
    const classes = [
      'azure_storage_conn', 'azure_sas', 'servicebus_sas', 'servicebus_conn', 'ado_password', 'odbc_pwd', 'jdbc_password', 'jdbc_oracle',
      'postgres_uri', 'mysql_uri', 'mongodb_srv_uri', 'redis_uri', 'amqp_uri', 'kafka_uri',
      'pass_key', 'pwd_key', 'passwd_key', 'passphrase_key', 'pin_key', 'db_pass_camel',
      'query_appid', 'query_uncommon', 'secretish_appkey', 'secretish_signature', 's3_presigned',
    ];
    for (const c of classes) expect([...carriers(c)].sort(), c).toEqual([...all].sort());
    // GraphQL does not travel in a header
    for (const c of ['graphql_variable', 'graphql_variable_secret', 'graphql_inline']) expect([...carriers(c)].sort(), c).toEqual(all.filter((x) => x !== 'header').sort());
    const looks = ['uuid_path', 'nanoid_path', 'asset_hash', 'sha256_filename', 'git_sha_ref', 'localhost_url', 'image_base64', 'cursor_base64', 'object_ids', 'ordinary_words', 'test_counts', 'build_version', 'public_keys', 'slug_query'];
    for (const c of looks) expect(corpus.filter((l) => l.class === c && l.lookalike).length, c).toBe(6);
    expect(corpus.length).toBeGreaterThanOrEqual(250);
  });

  it('leaks nothing, and prints recall per class and carrier', () => {
    const table = new Map<string, Record<string, string>>();
    const failures: string[] = [];
    for (const l of secrets) {
      const [kind, rec, field] = carry(l);
      const before = JSON.stringify(rec[field]);
      const out = JSON.stringify(engine.redactRecord(kind, rec));
      const leaked = leaksAny(out, l.secret!);
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
      expect(leaksAny(out, l.secret!), `${l.class}/${l.carrier}`).toBeNull();
    }
  });
});
