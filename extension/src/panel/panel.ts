/**
 * The side panel page (issue 19 item 6): state line, connection and pairing health, the agent
 * approvals waiting in the worker, a triage conversation over the panel's own MCP session, and
 * evidence cards from the calls it makes. Every string from the server, an agent or a page goes
 * in through textContent, never as HTML.
 */
// first: zod must be jitless before the SDK's modules build their schemas (no CSP violation)
import './zod-jitless.js';
import { LINK_TEXT, type PopupStatus } from '../shared/settings.js';
import { refreshApprovals } from '../popup/approvals.js';
import { badgeText, bound, headLines, readAnswer } from './answer.js';
import { PanelMcp, PanelSessionError, type TokenAnswer } from './mcp.js';
import { INITIAL, reconnectOnLink, reduce, view, type PanelEvent, type PanelModel } from './state.js';

declare const __GASOLINE_VERSION__: string;

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

/** the evidence the panel gathers itself: the same calls an agent would make */
const EVIDENCE: Array<{ id: string; title: string; args: Record<string, unknown> }> = [
  { id: 'errors', title: 'Errors', args: { what: 'errors', from: 'start', limit: 10 } },
  { id: 'network', title: 'Failing requests', args: { what: 'network', from: 'start', status_min: 400, limit: 10 } },
  { id: 'actions', title: 'Actions', args: { what: 'actions', from: 'start', limit: 10 } },
];
/** tool calls listed in the "Tool results" card; older ones fall off */
const MAX_CALLS = 8;
/** question-and-answer exchanges kept in the timeline; older ones fall off, so a long session's page stays small */
const MAX_EXCHANGES = 50;

let model: PanelModel = INITIAL;
const calls: Array<{ label: string; ok: boolean; ms: number }> = [];

const mcp = new PanelMcp({
  version: __GASOLINE_VERSION__,
  token: () => chrome.runtime.sendMessage({ type: 'panel_token' }) as Promise<TokenAnswer>,
  onLost: () => dispatch({ t: 'session_lost' }),
});

function dispatch(e: PanelEvent): void {
  const before = model;
  model = reduce(model, e);
  render();
  // the link is back and the session had failed (most likely for want of it): try once more
  if (reconnectOnLink(before, e, model)) void reconnect();
}

function render(): void {
  const v = view(model);
  document.body.dataset.state = v.kind;
  $('state').textContent = v.label;
  $('state-detail').textContent = v.detail;
  $('reconnect').hidden = v.kind !== 'error';
  $<HTMLButtonElement>('send').disabled = !v.canAsk;
  $('health-session').textContent = mcp.sessionId ? `open (${mcp.sessionId.slice(0, 8)}…)` : model.session === 'starting' ? 'opening…' : 'none';
  const notice = $('notice');
  notice.hidden = model.notice === null;
  if (model.notice !== null && $('notice-text').textContent !== model.notice) $('notice-text').textContent = model.notice;
}

function renderHealth(s: PopupStatus): void {
  const st = s.transport.state;
  $('health-link').textContent = `${LINK_TEXT[st.kind] ?? st.kind} · ${s.transport.url}${st.kind === 'connected' ? ` · server ${st.server_version}` : ''}`;
  const p = s.pairing;
  $('health-pairing').textContent =
    st.kind === 'refused' ? `refused: ${st.why}` : st.kind === 'connected' ? (p.preset ? 'paired (preset); the server proved it' : 'paired; the server proved it') : p.paired ? 'paired; waiting for the server to prove it' : 'not paired (pair in the popup)';
}

async function poll(): Promise<void> {
  try {
    const s = (await chrome.runtime.sendMessage({ t: 'status' })) as PopupStatus;
    renderHealth(s);
    const st = s.transport.state;
    if (model.link?.kind !== st.kind || model.link.why !== (st.kind === 'refused' ? st.why : undefined)) dispatch({ t: 'link', link: st.kind === 'refused' ? { kind: st.kind, why: st.why } : { kind: st.kind } });
  } catch {
    // the worker is restarting: the next tick asks again
  }
  try {
    const n = await refreshApprovals();
    if (n !== model.approvals) dispatch({ t: 'approvals', count: n });
    // a decided request's buttons are gone (the decision's own refresh may have rebuilt the list
    // before this tick); keyboard users land on the question field, not the page top
    if (document.activeElement === document.body && lastFocused && !lastFocused.isConnected) {
      lastFocused = null;
      $('question').focus();
    }
  } catch {
    // as above
  }
}

async function connect(): Promise<void> {
  // after a failure, really ask the daemon: a client left from before would claim ready at once
  if (model.session === 'failed') await mcp.reset();
  dispatch({ t: 'start' });
  try {
    await mcp.open();
    dispatch({ t: 'session_up' });
  } catch (e) {
    failed(e);
  }
}

function failed(e: unknown): void {
  if (e instanceof PanelSessionError) dispatch({ t: 'session_failed', code: e.code, message: e.message });
  else dispatch({ t: 'session_failed', code: 'mcp_error', message: String((e as Error)?.message ?? e).slice(0, 300) });
}

/** One tool call, recorded for the "Tool results" card. Session errors go to the state machine. */
async function tool(label: string, name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean } | null> {
  const t0 = performance.now();
  if (model.session === 'failed') dispatch({ t: 'start' });
  try {
    const r = await mcp.call(name, args);
    if (model.session !== 'up') dispatch({ t: 'session_up' });
    note(label, !r.isError, t0);
    return r;
  } catch (e) {
    note(label, false, t0);
    failed(e);
    return null;
  }
}

function note(label: string, ok: boolean, t0: number): void {
  calls.unshift({ label, ok, ms: Math.round(performance.now() - t0) });
  calls.length = Math.min(calls.length, MAX_CALLS);
  renderCallsCard();
}

async function ask(question: string): Promise<void> {
  const entry = document.createElement('article');
  entry.className = 'exchange';
  const q = document.createElement('p');
  q.className = 'question';
  q.textContent = question;
  const a = document.createElement('pre');
  a.className = 'answer';
  a.textContent = 'thinking…';
  entry.append(q, a);
  const timeline = $('timeline');
  timeline.append(entry);
  while (timeline.childElementCount > MAX_EXCHANGES) timeline.firstElementChild!.remove();
  const r = await tool('analyze triage', 'analyze', { target: 'triage', question });
  if (!r) {
    a.className = 'answer error';
    a.textContent = `No answer: ${view(model).detail}`;
    return;
  }
  const read = readAnswer(r.text);
  a.className = `answer${r.isError ? ' error' : ''}`;
  a.textContent = read.body || '(empty answer)';
  if (read.redaction || read.egressBlocked) {
    const badge = document.createElement('span');
    badge.className = `badge${read.egressBlocked || (read.redaction?.blocked ?? 0) > 0 ? ' blocked' : ''}`;
    badge.textContent = read.redaction ? badgeText(read.redaction) : 'model egress blocked by the redaction gateway';
    badge.setAttribute('aria-label', badge.textContent);
    entry.append(badge);
  }
  await refreshEvidence();
}

function card(id: string, title: string, text: string, isError: boolean): HTMLElement {
  const c = document.createElement('article');
  c.className = `card${isError ? ' error' : ''}`;
  c.dataset.card = id;
  const h = document.createElement('h3');
  h.textContent = title;
  const { head, more } = headLines(text, 6);
  const pre = document.createElement('pre');
  pre.textContent = head || '(nothing)';
  c.append(h, pre);
  if (more > 0) {
    const d = document.createElement('details');
    const s = document.createElement('summary');
    s.textContent = `${more} more line${more === 1 ? '' : 's'}`;
    const all = document.createElement('pre');
    all.textContent = bound(text);
    d.append(s, all);
    c.append(d);
  }
  return c;
}

function renderCallsCard(): void {
  const text = calls.map((c) => `${c.ok ? 'ok   ' : 'error'} ${c.label} · ${c.ms} ms`).join('\n');
  const el = card('calls', 'Tool results', text, calls[0]?.ok === false);
  const old = document.querySelector('[data-card="calls"]');
  if (old) old.replaceWith(el);
  else $('cards').append(el);
}

let evidenceBusy = false;
async function refreshEvidence(): Promise<void> {
  if (evidenceBusy) return;
  evidenceBusy = true;
  try {
    for (const ev of EVIDENCE) {
      const r = await tool(`observe ${ev.id}`, 'observe', ev.args);
      if (!r) return;
      const el = card(ev.id, ev.title, r.text, r.isError);
      const old = document.querySelector(`[data-card="${ev.id}"]`);
      if (old) old.replaceWith(el);
      else $('cards').insertBefore(el, document.querySelector('[data-card="calls"]'));
    }
  } finally {
    evidenceBusy = false;
  }
}

/** reopens the session and, when it is up, fills the evidence cards */
function reconnect(): Promise<void> {
  return connect().then(() => (model.session === 'up' ? refreshEvidence() : undefined));
}

/** the element keyboard focus was last on: when it is removed (a decided approval), focus goes to the question */
let lastFocused: Element | null = null;

function wire(): void {
  document.addEventListener('focusin', (e) => {
    lastFocused = e.target instanceof Element ? e.target : null;
  });
  const form = $<HTMLFormElement>('ask');
  const field = $<HTMLTextAreaElement>('question');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const question = field.value.trim();
    if (!question || !view(model).canAsk) return;
    field.value = '';
    void ask(question.slice(0, 2000));
  });
  field.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  $('reconnect').addEventListener('click', () => void reconnect());
  $('notice-ok').addEventListener('click', () => {
    dispatch({ t: 'notice_seen' });
    field.focus();
  });
  $('evidence-refresh').addEventListener('click', () => void refreshEvidence());
}

async function main(): Promise<void> {
  wire();
  render();
  await poll();
  setInterval(() => void poll(), 1000);
  await connect();
  if (model.session === 'up') await refreshEvidence();
}

void main();
