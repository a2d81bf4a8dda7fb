/**
 * CI results posted to /ci-result (PROTOCOL.md §3). The last N are kept; the same commit and
 * status update in place instead of adding a row. A new one raises an alert (alerts/ci-alert.ts);
 * observe({what:"ci"}) reads them back, failing tests and all, after the alert was drained.
 */
import { z } from 'zod';

export const CiResultSchema = z
  .object({
    status: z.enum(['success', 'failure', 'error']),
    source: z.string().min(1).max(200),
    ref: z.string().max(500).optional(),
    commit: z.string().max(200).optional(),
    summary: z.string().max(10_000).optional(),
    failures: z
      .array(z.object({ name: z.string().max(1000), message: z.string().max(10_000) }))
      .max(1000)
      .optional(),
    url: z.string().max(2000).optional(),
    duration_ms: z.number().finite().nonnegative().optional(),
  })
  .strip();

export type CiResult = z.infer<typeof CiResultSchema>;

export interface StoredCiResult extends CiResult {
  received_at: string;
  updates: number;
}

export class CiResults {
  private readonly items: StoredCiResult[] = [];
  constructor(private readonly keep = 10) {}

  /** Returns whether the result was new (false = an existing commit+status was updated). */
  add(r: CiResult, now = new Date()): { created: boolean; result: StoredCiResult } {
    const idx = r.commit ? this.items.findIndex((x) => x.commit === r.commit && x.status === r.status) : -1;
    if (idx >= 0) {
      const prev = this.items[idx]!;
      const next: StoredCiResult = { ...r, received_at: now.toISOString(), updates: prev.updates + 1 };
      this.items.splice(idx, 1);
      this.items.push(next);
      return { created: false, result: next };
    }
    const stored: StoredCiResult = { ...r, received_at: now.toISOString(), updates: 0 };
    this.items.push(stored);
    if (this.items.length > this.keep) this.items.splice(0, this.items.length - this.keep);
    return { created: true, result: stored };
  }

  list(): readonly StoredCiResult[] {
    return this.items;
  }
}
