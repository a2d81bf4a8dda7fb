/**
 * The SLO gate: bench/slo.json holds every target and how it is gated; this module judges a
 * run's figures against it. A figure that could not be measured (the server under test does not
 * have the feature) is "not measured" with its reason and gates nothing; a figure that should
 * have been measured and is missing fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './load/server-proc.js';

export type Gate = 'absolute' | 'report' | 'relative';
export type Figure = number | boolean | null;

export interface Slo {
  id: string;
  title: string;
  metric: string;
  op: '<' | '<=' | '>=' | '==';
  target: number | boolean;
  unit?: string;
  gate: Gate;
}

export interface CompareMetric {
  metric: string;
  better: 'higher' | 'lower';
  tolerance: number;
}

export interface SloFile {
  slos: Slo[];
  compare: { rounds: number; metrics: CompareMetric[]; calibration: unknown };
}

export type Verdict = 'PASS' | 'FAIL' | 'not measured' | 'not run';

export interface SloResult extends Slo {
  value: Figure;
  verdict: Verdict;
  reason?: string;
  /** true when this result makes the gate fail */
  blocking: boolean;
}

export function loadSlos(file = join(ROOT, 'bench', 'slo.json')): SloFile {
  return JSON.parse(readFileSync(file, 'utf8')) as SloFile;
}

function holds(v: number | boolean, op: Slo['op'], t: number | boolean): boolean {
  if (op === '==') return v === t;
  if (typeof v !== 'number' || typeof t !== 'number') return false;
  return op === '<' ? v < t : op === '<=' ? v <= t : v >= t;
}

/**
 * figures: what was measured; unavailable: metric → why it cannot be measured on this build;
 * ran: the profiles (metric prefixes) that ran in this invocation.
 */
export function judge(slos: Slo[], figures: Record<string, Figure>, unavailable: Record<string, string>, ran: Set<string>): SloResult[] {
  return slos.map((s) => {
    const prefix = s.metric.split('.')[0]!;
    const value = figures[s.metric];
    if (value === undefined || value === null) {
      if (unavailable[s.metric]) return { ...s, value: null, verdict: 'not measured', reason: unavailable[s.metric], blocking: false };
      if (!ran.has(prefix)) return { ...s, value: null, verdict: 'not run', blocking: false };
      return { ...s, value: null, verdict: 'FAIL', reason: 'no figure although its profile ran', blocking: s.gate === 'absolute' };
    }
    const ok = holds(value, s.op, s.target);
    return { ...s, value, verdict: ok ? 'PASS' : 'FAIL', blocking: !ok && s.gate === 'absolute' };
  });
}

function targetText(s: Slo): string {
  return `${s.op === '==' ? '=' : s.op} ${typeof s.target === 'number' ? s.target.toLocaleString('en-US') : String(s.target)}${s.unit ? ` ${s.unit}` : ''}`;
}

function valueText(s: SloResult): string {
  if (s.value === null) return s.reason ? `— (${s.reason})` : '—';
  return `${typeof s.value === 'number' ? s.value.toLocaleString('en-US') : String(s.value)}${s.unit ? ` ${s.unit}` : ''}`;
}

export function sloTable(rs: SloResult[]): string {
  const head = '| SLO | target | measured | result | gate |\n|---|---|---|---|---|';
  const body = rs.map((r) => `| ${r.title} | ${targetText(r)} | ${valueText(r).replace(/\|/g, '\\|')} | ${r.verdict === 'PASS' ? 'PASS' : r.verdict === 'FAIL' ? '**FAIL**' : r.verdict} | ${r.gate} |`);
  return [head, ...body].join('\n');
}
