/**
 * The main thread's alert fan-out: alerts from the workers (through the alert ring) and from
 * main itself (CI, thresholds, extension state) go to every subscriber — each MCP session's
 * AlertBuffer and StreamState. Delivery is synchronous and O(subscribers): nothing queues here.
 */
import { log } from '../../log.js';
import { AlertSchema, type AlertEnvelope } from './alert.js';

export interface AlertHubStats {
  published: number;
  from_workers: number;
  /** overwritten in the alert ring before main read them */
  missed: number;
  /** failed validation (a bug, never user input: workers build alerts themselves) */
  invalid: number;
  by_category: Record<string, number>;
}

export class AlertHub {
  private readonly subs = new Set<(env: AlertEnvelope) => void>();
  private readonly s: AlertHubStats = { published: 0, from_workers: 0, missed: 0, invalid: 0, by_category: {} };

  subscribe(fn: (env: AlertEnvelope) => void): () => void {
    this.subs.add(fn);
    return () => this.subs.delete(fn);
  }

  publish(env: AlertEnvelope): void {
    const ok = AlertSchema.safeParse(env.alert);
    if (!ok.success) {
      this.s.invalid++;
      log.warn('alert refused', { reason: ok.error.issues[0]?.message ?? 'invalid' });
      return;
    }
    this.s.published++;
    this.s.by_category[env.alert.category] = (this.s.by_category[env.alert.category] ?? 0) + 1;
    for (const fn of this.subs) {
      try {
        fn(env);
      } catch (e) {
        log.error('alert subscriber failed', { error: (e as Error).message });
      }
    }
  }

  /** What the worker ring delivered. */
  fromWorkers(records: unknown[], missed: number): void {
    this.s.missed += missed;
    const readTime = performance.timeOrigin + performance.now();
    const stamp = (x: unknown): number => (typeof x === 'number' ? x : 0);
    for (const r of records) {
      this.s.from_workers++;
      const env = r as AlertEnvelope;
      if (env && typeof env === 'object' && env.alert) this.publish({ alert: env.alert, edgeTime: stamp(env.edgeTime), startTime: stamp(env.startTime), publishTime: stamp(env.publishTime), readTime });
      else this.s.invalid++;
    }
  }

  get stats(): AlertHubStats {
    return { ...this.s, by_category: { ...this.s.by_category } };
  }
}
