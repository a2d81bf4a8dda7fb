import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';

describe('error catalog', () => {
  it('matches docs/ERRORS.md row for row', () => {
    const doc = readFileSync(new URL('../../docs/ERRORS.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z0-9_]+)` \| (\d+) \| (\d+) \| (.+) \|$/gm)].map((m) => [m[1], Number(m[2]), Number(m[3]), m[4]]);
    const catalog = Object.entries(ERRORS).map(([k, v]) => [k, v.http, v.wsClose, v.summary]);
    expect(rows).toEqual(catalog);
  });
});
