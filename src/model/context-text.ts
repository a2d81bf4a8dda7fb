/**
 * The triage context as a model reads it: one block per record (an error with what came before
 * it, a failing request), within max_context_chars. The cut falls between blocks, never inside
 * one, and a last line says how many records it left out, so a model (and the person reading its
 * answer) knows the context is partial.
 */
import type { TriageContext, TriageError, TriageRequest } from './schema.js';

/**
 * A time as ISO text, total: a record's ts comes from a page (1e300, -1e20), and a RangeError here
 * would block every triage while that record is buffered. Out of Date's range it is the number.
 */
export const iso = (t: number): string => {
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString();
};

export function errorBlock(e: TriageError): string {
  const lines = [`ERROR ×${e.count} ${JSON.stringify(e.message)}${e.location ? ` at ${e.location}${e.mapped ? ' (source-mapped)' : ''}` : ''} first ${iso(e.first)} last ${iso(e.last)}${e.page ? ` page ${e.page}` : ''}`];
  for (const b of e.before) lines.push(`  before: ${b.kind} ${JSON.stringify(b.text)}`);
  return lines.join('\n');
}

export function requestBlock(r: TriageRequest): string {
  return `REQUEST ×${r.count} ${r.method} ${r.url} → ${r.status === 0 ? 'no response' : r.status}${r.error ? ` ${JSON.stringify(r.error)}` : ''} last ${iso(r.last)}`;
}

export interface RenderedContext {
  text: string;
  cut: { errors: number; failing: number };
}

/**
 * `blocks`: each record's text as it leaves (already redacted), in the context's order: errors
 * first, then requests. Past `max` characters the rest are left out and counted.
 */
export function renderContext(c: TriageContext, blocks: { errors: string[]; failing: string[] }, max: number): RenderedContext {
  const head = [
    `browser telemetry ${c.since === null ? '(nothing buffered)' : `since ${iso(c.since)}`}: ${c.records} records; extension ${c.extension}`,
    `errors: ${c.errors.length + c.more_errors} distinct; failing endpoints: ${c.failing.length + c.more_failing}${c.partial ? ' (partial read)' : ''}`,
  ].join('\n');
  // room for the cut line, whatever it says
  const room = max - head.length - 120;
  const parts = [head];
  let used = 0;
  const take = (list: string[]): number => {
    let n = 0;
    for (const b of list) {
      if (used + b.length + 1 > room) break;
      parts.push(b);
      used += b.length + 1;
      n++;
    }
    return list.length - n;
  };
  const cutErrors = take(blocks.errors);
  // once an error did not fit, no request jumps the queue: the order is the context's
  const cutFailing = cutErrors ? blocks.failing.length : take(blocks.failing);
  if (cutErrors || cutFailing) parts.push(`[cut by model.max_context_chars (${max}): ${cutErrors} errors and ${cutFailing} failing requests left out]`);
  if (c.more_errors || c.more_failing) parts.push(`[not read into the context: ${c.more_errors} more distinct errors, ${c.more_failing} more failing endpoints]`);
  return { text: parts.join('\n'), cut: { errors: cutErrors, failing: cutFailing } };
}
