/**
 * The side panel's one state machine (issue 19 item 6). Three things feed it — the panel's own
 * MCP session, the worker's connection to the server (the popup's status), and the approvals
 * waiting in the worker — and it answers the single state the panel shows:
 *
 *   idle            nothing asked yet (the page just opened)
 *   connecting      asking the worker for a token, or initialising (again) the MCP session
 *   ready           the session is up and the extension streams to a paired server
 *   needs_approval  an agent waits for the user's decision (wins over ready and degraded: it is
 *                   the one thing the user must act on)
 *   degraded        the session is up but the browser side is not (the extension is not
 *                   connected or not paired), so answers see no new telemetry
 *   error           no session: the worker could not get a token, or the server refused it
 *
 * Pure: no DOM, no chrome, so it is tested in Node (test/unit/extension/panel-state.test.ts).
 */

export type PanelStateKind = 'idle' | 'connecting' | 'ready' | 'needs_approval' | 'degraded' | 'error';

/** what the worker reports of its WebSocket (TransportStatus.state.kind and, when refused, why) */
export interface ExtensionLink {
  kind: 'stopped' | 'connecting' | 'handshake' | 'connected' | 'backoff' | 'refused';
  why?: string;
}

export interface PanelModel {
  session: 'none' | 'starting' | 'up' | 'failed';
  /** the last session failure: a stable code and the sentence shown */
  failure: { code: string; message: string } | null;
  link: ExtensionLink | null;
  approvals: number;
  /** one line the user should read once (a re-initialised session) */
  notice: string | null;
}

export type PanelEvent =
  | { t: 'start' }
  | { t: 'session_up' }
  | { t: 'session_failed'; code: string; message: string }
  /** the server forgot our session (404): a new one is being made, and the user is told */
  | { t: 'session_lost' }
  | { t: 'link'; link: ExtensionLink | null }
  | { t: 'approvals'; count: number }
  | { t: 'notice_seen' };

export const INITIAL: PanelModel = Object.freeze({ session: 'none', failure: null, link: null, approvals: 0, notice: null }) as PanelModel;

export function reduce(m: PanelModel, e: PanelEvent): PanelModel {
  switch (e.t) {
    case 'start':
      return { ...m, session: 'starting', failure: null };
    case 'session_up':
      return { ...m, session: 'up', failure: null };
    case 'session_failed':
      return { ...m, session: 'failed', failure: { code: e.code, message: e.message } };
    case 'session_lost':
      return { ...m, session: 'starting', failure: null, notice: 'The server no longer knew this panel session (it restarted or the session expired); a new session was started. Earlier answers stay below; the server\u2019s read cursors start afresh.' };
    case 'link':
      return { ...m, link: e.link };
    case 'approvals':
      return { ...m, approvals: Math.max(0, Math.trunc(e.count)) };
    case 'notice_seen':
      return { ...m, notice: null };
  }
}

/**
 * Whether the panel should reopen its session after `e`: the worker's link just came back to
 * connected while the session had failed (a token cannot be had without that link, so the
 * failure was most likely its absence). Once per change: a link that stays connected asks nothing.
 */
export function reconnectOnLink(before: PanelModel, e: PanelEvent, after: PanelModel): boolean {
  return e.t === 'link' && before.link?.kind !== 'connected' && after.link?.kind === 'connected' && after.session === 'failed';
}

export interface PanelView {
  kind: PanelStateKind;
  /** the words next to the state dot */
  label: string;
  /** one sentence: why, and what to do */
  detail: string;
  /** whether a question can be sent now */
  canAsk: boolean;
}

const LINK_WHY: Record<string, string> = {
  unpaired: 'the extension is not paired with this server: pair it in the Gasoline popup',
  no_proof: 'the server on the port proved no pairing, so the extension sends it nothing',
  impostor: 'the server on the port is not the gasoline the extension is paired with',
};

export function view(m: PanelModel): PanelView {
  if (m.session === 'failed') {
    const f = m.failure ?? { code: 'error', message: 'the panel session failed' };
    // asking again is how the user retries: the question reopens the session first
    return { kind: 'error', label: 'error', detail: `${f.code}: ${f.message}`, canAsk: true };
  }
  if (m.session === 'none') return { kind: 'idle', label: 'idle', detail: 'Not connected yet.', canAsk: false };
  if (m.session === 'starting') return { kind: 'connecting', label: 'connecting…', detail: 'Opening a panel session with the local gasoline server.', canAsk: false };
  if (m.approvals > 0) return { kind: 'needs_approval', label: 'needs approval', detail: `${m.approvals} agent action${m.approvals === 1 ? '' : 's'} wait${m.approvals === 1 ? 's' : ''} for your decision below.`, canAsk: true };
  const link = m.link;
  if (link?.kind !== 'connected') {
    const why = !link ? 'the extension did not report its connection' : link.kind === 'refused' ? (LINK_WHY[link.why ?? ''] ?? `the extension refused the server (${link.why ?? '?'})`) : link.kind === 'backoff' ? 'the extension cannot reach the server right now' : 'the extension is still connecting to the server';
    return { kind: 'degraded', label: 'degraded', detail: `Answers see no new browser data: ${why}.`, canAsk: true };
  }
  return { kind: 'ready', label: 'ready', detail: 'Ask about what broke on the tracked page.', canAsk: true };
}
