/**
 * One MCP session's view of the alert stream: every alert from the hub goes to the passive
 * AlertBuffer (drained by observe) and to the active StreamState (notifications, opt-in).
 */
import type { AlertEnvelope } from '../domain/alerts/alert.js';
import { AlertBuffer, formatAlerts, pendingNote } from '../domain/alerts/buffer.js';
import type { AlertHub } from '../domain/alerts/hub.js';
import { StreamState } from '../domain/streaming/stream-state.js';

export type Notify = (n: { method: 'notifications/message'; params: { level: 'info' | 'warning' | 'error'; logger: 'gasoline'; data: unknown } }) => Promise<boolean>;

export class AlertDelivery {
  readonly buffer = new AlertBuffer();
  readonly stream: StreamState;
  private unsubscribe: (() => void) | undefined;

  constructor(notify: Notify) {
    this.stream = new StreamState({ emit: notify });
  }

  attach(hub: AlertHub | undefined): void {
    if (!hub || this.unsubscribe) return;
    this.unsubscribe = hub.subscribe((env: AlertEnvelope) => {
      this.buffer.add(env.alert);
      this.stream.offer(env);
    });
  }

  /** The alert block for an observe result ('' when none wait); empties the buffer. */
  drainBlock(): string {
    return this.buffer.pending ? formatAlerts(this.buffer.drain()) : '';
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
