/**
 * Threshold alerts: state transitions of the server itself, seen from main — input memory
 * pressure (normal → soft → hard and back), admission control (overloaded or not), and the
 * extension connecting or leaving. Only transitions alert; a steady state says nothing.
 */
import { correlationId, type Alert } from './alert.js';

export type Pressure = 'normal' | 'soft' | 'hard';

/** fill of the input arena at which pressure is soft / hard (hard is where intake is refused) */
export const SOFT_FILL = 0.5;
export const HARD_FILL = 0.75;

export function pressureOf(fill: number): Pressure {
  return fill >= HARD_FILL ? 'hard' : fill >= SOFT_FILL ? 'soft' : 'normal';
}

function alert(severity: Alert['severity'], title: string, detail: string, key: string, context?: Record<string, unknown>): Alert {
  return {
    severity,
    category: 'threshold',
    title,
    detail,
    timestamp: new Date().toISOString(),
    source: 'threshold_monitor',
    dedup_key: key,
    correlation_id: correlationId('thr'),
    ...(context ? { context } : {}),
  };
}

export class ThresholdTracker {
  private pressure: Pressure = 'normal';
  private overloaded = false;

  /** every reading was normal at the last update: nothing can go back to normal without a change */
  get settled(): boolean {
    return this.pressure === 'normal' && !this.overloaded;
  }

  /** Called on a timer with the current readings; returns the transitions as alerts. */
  update(fill: number, overloaded: boolean): Alert[] {
    const out: Alert[] = [];
    const p = pressureOf(fill);
    if (p !== this.pressure) {
      const pct = Math.round(fill * 100);
      out.push(
        p === 'normal'
          ? alert('info', 'Input memory pressure back to normal', `input buffer ${pct} % full (was ${this.pressure})`, 'pressure', { from: this.pressure, to: p, fill_pct: pct })
          : alert(p === 'hard' ? 'error' : 'warning', `Input memory pressure ${p}`, `input buffer ${pct} % full (${p === 'hard' ? 'new batches are refused until it drains' : 'intake will be refused at 75 %'})`, 'pressure', { from: this.pressure, to: p, fill_pct: pct }),
      );
      this.pressure = p;
    }
    if (overloaded !== this.overloaded) {
      out.push(
        overloaded
          ? alert('warning', 'Ingest overloaded: refusing new batches', 'producers get nack/503 with retry_after_ms; telemetry is delayed, not lost, while they resend', 'overload')
          : alert('info', 'Ingest recovered from overload', 'batches are accepted again', 'overload'),
      );
      this.overloaded = overloaded;
    }
    return out;
  }

  /**
   * `session` and `version` come from whoever said hello. They are redacted whole and only then
   * cut: a token cut first keeps a prefix too short for its rule to recognise (#18 item 3).
   */
  extension(event: 'connected' | 'disconnected', rawSession: string, rawVersion: string, redact: (s: string) => string): Alert {
    const session = redact(rawSession);
    const version = redact(rawVersion).slice(0, 40);
    return event === 'connected'
      ? alert('info', 'Extension connected', `browser extension ${version} connected (session ${session.slice(0, 40)})`, `ext:${session}`)
      : alert('warning', 'Extension disconnected', `browser extension session ${session.slice(0, 40)} went away; no new browser data until it reconnects`, `ext:${session}`);
  }
}
