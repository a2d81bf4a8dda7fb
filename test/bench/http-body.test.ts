/**
 * The POST /logs micro benchmark measures the product's path only while that path stores every
 * entry: the rig refuses a body that was not stored whole, and the stage split covers each stage.
 */
import { describe, expect, it } from 'vitest';
import { httpBodyCosts, httpTaskRig, logsBodies } from '../../bench/micro/http-body.bench.js';

describe('the POST /logs task rig', () => {
  it('stores each body whole, run after run (its item slot reset each time)', () => {
    const bodies = logsBodies(2);
    const rig = httpTaskRig(bodies);
    for (let i = 0; i < 6; i++) expect(rig.runNext()).toBe(50);
  });

  it('refuses to measure a body whose entries were not all stored', () => {
    const entries = JSON.parse(Buffer.from(logsBodies(1)[0]!).toString('utf8')).entries as unknown[];
    entries[3] = { ts: 'yesterday', level: 42 };
    const rig = httpTaskRig([Buffer.from(JSON.stringify({ entries }))]);
    expect(() => rig.runNext()).toThrow(/not stored whole/);
  });
});

describe('the stage split', () => {
  it('gives every stage, the whole task and the bare parse, per entry', () => {
    const c = httpBodyCosts(logsBodies(2), 2, 10);
    expect(c.entries).toBe(50);
    expect(Object.keys(c.stages)).toEqual(['parse', 'spans', 'validate', 'redact', 'normalize', 'detect', 'encode', 'commit']);
    for (const v of Object.values(c.stages)) expect(v).toBeGreaterThanOrEqual(0);
    expect(c.sum).toBeGreaterThan(0);
    expect(c.bareParse).toBeGreaterThan(0);
    // the task parses the same body and does everything else besides
    expect(c.wholeOverParse).toBeGreaterThan(1);
    expect(c.redactPct).toBeGreaterThan(0);
  });
});
