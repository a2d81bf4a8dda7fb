/**
 * The main thread's alert fan-out: alerts from the workers (through the alert ring) and from
 * main itself (CI, thresholds, extension state) go to every subscriber — each MCP session's
 * AlertBuffer and StreamState. Delivery is synchronous and O(subscribers). The one thing kept
 * here is the count of alerts the workers held back over the rate caps (held.ts): the next alert
 * of their scope names them, or `tick()` sends a summary.
 */
import { log } from '../../log.js';
import { AlertSchema, type AlertEnvelope } from './alert.js';
import { HELD_SOURCE, HeldLedger, talliesOf, type HeldStats } from './held.js';

export interface AlertHubStats {
  published: number;
  from_workers: number;
  /** overwritten in the alert ring before main read them */
  missed: number;
  /** failed validation (a bug, never user input: workers build alerts themselves) */
  invalid: number;
  by_category: Record<string, number>;
  /** alerts the workers held back over the rate caps, and how they were surfaced */
  held_back: HeldStats;
}

export class AlertHub {
  private readonly subs = new Set<(env: AlertEnvelope) => void>();
  private readonly s: Omit<AlertHubStats, 'held_back'> = { published: 0, from_workers: 0, missed: 0, invalid: 0, by_category: {} };
  private readonly held = new HeldLedger();

  constructor(private readonly now: () => number = Date.now) {}

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
    const alert = this.held.annotate(env.alert, this.now());
    const out = alert === env.alert ? env : { ...env, alert };
    this.s.published++;
    this.s.by_category[alert.category] = (this.s.by_category[alert.category] ?? 0) + 1;
    for (const fn of this.subs) {
      try {
        fn(out);
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
      // a worker's tally of what it held back: kept until an alert or the summary names it
      if (env && typeof env === 'object' && env.alert?.source === HELD_SOURCE) this.held.add(talliesOf(env.alert), this.now());
      else if (env && typeof env === 'object' && env.alert) this.publish({ alert: env.alert, edgeTime: stamp(env.edgeTime), startTime: stamp(env.startTime), publishTime: stamp(env.publishTime), readTime });
      else this.s.invalid++;
    }
  }

  /**
   * Called on a timer: the summary of held-back alerts no alert of their scope named in time.
   * `heldAtSource`: the workers' shared count of them (DetectState.alertsSuppressed).
   */
  tick(heldAtSource?: number): void {
    const summary = this.held.summary(this.now(), heldAtSource);
    if (summary) this.publish({ alert: summary, edgeTime: 0 });
  }

  /** a held-back alert waits for the summary a later tick() makes */
  get holding(): boolean {
    return this.held.waiting;
  }

  /** alerts held back over the rate caps since start, as the workers reported them */
  heldTotal(): number {
    return this.held.stats.total;
  }

  get stats(): AlertHubStats {
    return { ...this.s, by_category: { ...this.s.by_category }, held_back: this.held.stats };
  }
}
