/**
 * One MCP session's view of the alert stream: every alert from the hub goes to the passive
 * AlertBuffer (drained by observe) and to the active StreamState (notifications, opt-in).
 * Alert titles and details carry page text: the block quotes them (render/alert-block.ts), and
 * what is streamed has its line breaks and bidi controls escaped in every field a page can reach.
 */
import type { AlertEnvelope } from '../domain/alerts/alert.js';
import { AlertBuffer, foldKey, pendingNote, synthesize } from '../domain/alerts/buffer.js';
import { HELD_SOURCE } from '../domain/alerts/held.js';
import { formatAlerts } from './render/alert-block.js';
import { PAGE_NOTE, pageFlat } from './render/page-text.js';
import { StreamState } from '../domain/streaming/stream-state.js';
import type { Alert } from '../domain/alerts/alert.js';
import type { StackResolver } from '../sourcemaps/index.js';
import type { AlertSource } from './port.js';
import type { PendingAlertSource } from './tools/context.js';

/** the call that shows an alert's evidence */
function nextCall(a: Alert): string {
  if (a.source === 'error_detector' || a.source === 'spike_detector') return 'observe({what:"errors"})';
  if (a.source === 'anomaly_detector') return a.title.startsWith('WebSocket') ? 'observe({what:"websocket_events"})' : 'observe({what:"network", status_min:500})';
  if (a.category === 'regression') return 'analyze({target:"performance"})';
  if (a.category === 'ci') return 'observe({what:"ci"})';
  if (a.category === 'security') return 'analyze({target:"security"})';
  if (a.category === 'user_frustration') return 'observe({what:"actions"})';
  if (a.source === HELD_SOURCE) return 'observe({what:"summary"})';
  if (a.category === 'noise') return 'configure({action:"noise_rule", noise_action:"add", ...})';
  return 'configure({action:"health"})';
}

export type Notify = (n: { method: 'notifications/message'; params: { level: 'info' | 'warning' | 'error'; logger: 'gasoline'; data: unknown } }) => Promise<boolean>;

export class AlertDelivery {
  readonly buffer = new AlertBuffer();
  readonly stream: StreamState;
  private unsubscribe: (() => void) | undefined;
  /** alerts held back over the rate caps that alerts reaching this session named, since the last summary */
  private held = 0;

  /**
   * `onPush`: each streamed alert's edge → written latency (the metrics histogram). `stacks`: a
   * new error's top frame is shown at its original position when its source map is resolved.
   */
  constructor(
    notify: Notify,
    onPush?: (ms: number) => void,
    private readonly stacks?: StackResolver,
  ) {
    this.stream = new StreamState({ emit: notify, ...(onPush ? { onLatency: onPush } : {}) });
  }

  /**
   * Waits (within source_maps.wait_ms) for the maps of the error alerts waiting here, so the block
   * an observe carries shows their original frames; the app asked for them as the alerts arrived.
   */
  async settleFrames(): Promise<void> {
    if (!this.stacks?.enabled || !this.buffer.pending) return;
    const recs = this.buffer.peek().flatMap((a) => frameFields(a) ?? []);
    if (recs.length) await this.stacks.settle(recs);
  }

  /**
   * An error alert with its top frame's original position (`context.at`, `context.code`) when the
   * map is resolved; a push does not wait for it: the app asked for the map as the alert arrived.
   */
  private mapped(a: Alert): Alert {
    const f = this.stacks?.enabled ? frameFields(a) : undefined;
    const r = f && this.stacks!.lookup(f);
    if (!r) return a;
    const to = r.frames[r.top]!.to!;
    return { ...a, context: { ...a.context, at: `${to.file}:${to.line}:${to.column}`, ...(to.code ? { code: to.code } : {}) } };
  }

  /** what observe's summary lists, read without draining */
  readonly pendingSource: PendingAlertSource = {
    size: () => synthesize(this.buffer.peek()).length,
    peek: (limit) => synthesize(this.buffer.peek()).slice(0, limit).map((a) => ({ severity: a.severity, title: a.title, count: a.count, next: nextCall(a) })),
    takeHeld: () => {
      const n = this.held;
      this.held = 0;
      return n;
    },
  };

  /** `keep`: the client's tab filter (tools/tab-scope.ts); an alert it drops reaches neither the block nor the stream */
  attach(source: AlertSource | null, keep?: (a: Alert) => boolean): void {
    if (!source || this.unsubscribe) return;
    this.unsubscribe = source.subscribe((env: AlertEnvelope) => {
      if (keep && !keep(env.alert)) return;
      const held = env.alert.context?.held_back;
      if (typeof held === 'number') this.held += held;
      this.buffer.add(env.alert);
      // escaped before the stream clips it to its wire caps, so the clip bounds what is sent
      if (this.stream.enabled) this.stream.offer({ ...env, alert: flatAlert(this.mapped(env.alert)) });
    });
  }

  /**
   * The alert block for an observe result ('' when none wait), at most `maxChars`, from what is
   * waiting now, ending with the page-data note (the answer's only one: observe leaves it out of
   * its own text when a block rides along). Nothing leaves the buffer until `commit()` (the
   * result is on its way): what did not fit, and what arrives meanwhile, waits for the next observe.
   */
  prepareBlock(maxChars = Infinity): { text: string; commit: () => void } {
    if (!this.buffer.pending) return { text: '', commit: () => undefined };
    const snapshot = new Set(this.buffer.peek());
    const { text, shown } = formatAlerts([...snapshot].map((a) => this.mapped(a)), maxChars - PAGE_NOTE.length - 1);
    return {
      text: `${text}\n${PAGE_NOTE}`,
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

/** The alert's generated top frame (detect.ts puts it in context.frame), as the resolver reads a record. */
function frameFields(a: Alert): { source: string; url?: string } | undefined {
  const frame = a.context?.frame;
  if (typeof frame !== 'string') return undefined;
  return { source: frame, ...(a.url !== undefined ? { url: a.url } : {}) };
}

/** The fields a page can reach (a message, a URL, a close reason), escaped in place: a notification is JSON, and no client must meet a raw line break in it. */
function flatAlert(a: Alert): Alert {
  return { ...a, title: pageFlat(a.title), detail: pageFlat(a.detail), ...(a.url !== undefined ? { url: pageFlat(a.url) } : {}), dedup_key: pageFlat(a.dedup_key), ...(a.context !== undefined ? { context: flatValue(a.context) as Record<string, unknown> } : {}) };
}

function flatValue(v: unknown): unknown {
  if (typeof v === 'string') return pageFlat(v);
  if (Array.isArray(v)) return v.map(flatValue);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, flatValue(x)]));
  return v;
}
