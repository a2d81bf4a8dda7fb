/**
 * One MCP session's view of the alert stream: every alert from the hub goes to the passive
 * AlertBuffer (drained by observe) and to the active StreamState (notifications, opt-in).
 */
import type { AlertEnvelope } from '../domain/alerts/alert.js';
import { AlertBuffer, foldKey, formatAlerts, pendingNote, synthesize } from '../domain/alerts/buffer.js';
import { StreamState } from '../domain/streaming/stream-state.js';
import type { Alert } from '../domain/alerts/alert.js';
import type { AlertSource } from './port.js';
import type { PendingAlertSource } from './tools/context.js';

/** the call that shows an alert's evidence */
function nextCall(a: Alert): string {
  if (a.source === 'error_detector' || a.source === 'spike_detector') return 'observe({what:"errors"})';
  if (a.source === 'anomaly_detector') return a.title.startsWith('WebSocket') ? 'observe({what:"websocket_events"})' : 'observe({what:"network", status_min:500})';
  if (a.category === 'regression') return 'analyze({target:"performance"})';
  if (a.category === 'noise') return 'configure({action:"noise_rule", noise_action:"add", ...})';
  return 'configure({action:"health"})';
}

export type Notify = (n: { method: 'notifications/message'; params: { level: 'info' | 'warning' | 'error'; logger: 'gasoline'; data: unknown } }) => Promise<boolean>;

export class AlertDelivery {
  readonly buffer = new AlertBuffer();
  readonly stream: StreamState;
  private unsubscribe: (() => void) | undefined;

  constructor(notify: Notify) {
    this.stream = new StreamState({ emit: notify });
  }

  /** what observe's summary lists, read without draining */
  readonly pendingSource: PendingAlertSource = {
    size: () => synthesize(this.buffer.peek()).length,
    peek: (limit) => synthesize(this.buffer.peek()).slice(0, limit).map((a) => ({ severity: a.severity, title: a.count > 1 ? `${a.title} ×${a.count}` : a.title, next: nextCall(a) })),
  };

  attach(source: AlertSource | null): void {
    if (!source || this.unsubscribe) return;
    this.unsubscribe = source.subscribe((env: AlertEnvelope) => {
      this.buffer.add(env.alert);
      this.stream.offer(env);
    });
  }

  /**
   * The alert block for an observe result ('' when none wait), at most `maxChars`, from what is
   * waiting now. Nothing leaves the buffer until `commit()` (the result is on its way): what did
   * not fit, and what arrives meanwhile, waits for the next observe.
   */
  prepareBlock(maxChars = Infinity): { text: string; commit: () => void } {
    if (!this.buffer.pending) return { text: '', commit: () => undefined };
    const snapshot = new Set(this.buffer.peek());
    const { text, shown } = formatAlerts([...snapshot], maxChars);
    return {
      text,
      commit: () => {
        for (const a of this.buffer.drain()) if (!(snapshot.has(a) && shown.has(foldKey(a)))) this.buffer.add(a);
      },
    };
  }

  /** The line other tools add while alerts wait, without draining them. */
  note(): string {
    return pendingNote(this.buffer.pending);
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.stream.close();
  }
}
