/**
 * Does the browser transport open (issue 19 item 7)? The side panel's door is /mcp, the bridges'
 * door. `gasoline --status` and `gasoline doctor` knock on it from outside, as a panel would, but
 * without a panel: a daemon is asked to `initialize` with the bridges' token from the state dir
 * (the session is ended at once: DELETE); a standalone has no such token and takes panel tokens
 * only, so its door must answer 401 to a request that carries none. What the redaction policy and
 * the extension's pairing look like is read from /health (`describeRedaction`, `describeExtension`).
 */
import { CLIENT_HEADER, MCP_PATH, readDaemonToken } from '../daemon/contract.js';
import { readBody, send } from './http.js';

export interface TransportCheck {
  ok: boolean;
  detail: string;
}

/** the client id the check's session is opened under: its own, so no agent's state is touched */
export const CHECK_CLIENT_ID = 'gasoline-status';
const PROTOCOL = '2025-06-18';

export async function checkBrowserTransport(port: number, stateDir: string, mode: string, timeoutMs = 3000): Promise<TransportCheck> {
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: CHECK_CLIENT_ID, version: '1' } } });
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', [CLIENT_HEADER]: CHECK_CLIENT_ID };
  if (mode !== 'server') {
    // a standalone: the door takes panel tokens only; no token at all must be refused, not served
    try {
      const res = await send({ port, method: 'POST', path: MCP_PATH, headers, body: init, timeoutMs });
      const body = await readBody(res, 64 * 1024);
      if (res.statusCode === 401) return { ok: true, detail: `/mcp is open to the side panel (panel tokens only: a --${mode} has no bridge token; ${JSON.parse(body).error ?? 'unauthorized'} without one)` };
      return { ok: false, detail: `/mcp answered HTTP ${res.statusCode ?? '?'} to a request without a token (expected 401: is this an older gasoline?)` };
    } catch (e) {
      return { ok: false, detail: `/mcp did not answer: ${(e as Error).message}` };
    }
  }
  const token = readDaemonToken(stateDir, port);
  if (!token) return { ok: false, detail: `no bridge token in ${stateDir} to try /mcp with (the daemon runs with another state dir or user)` };
  headers.authorization = `Bearer ${token}`;
  const started = performance.now();
  try {
    const res = await send({ port, method: 'POST', path: MCP_PATH, headers, body: init, timeoutMs });
    const body = await readBody(res, 256 * 1024);
    const ms = Math.round(performance.now() - started);
    const sid = res.headers['mcp-session-id'];
    const version = protocolOf(body);
    if (typeof sid === 'string' && sid) {
      // the check's session is not left for the idle reaper
      const del = await send({ port, method: 'DELETE', path: MCP_PATH, headers: { ...headers, 'mcp-session-id': sid }, timeoutMs }).catch(() => null);
      del?.resume();
    }
    if (res.statusCode !== 200 || !version || typeof sid !== 'string') return { ok: false, detail: `/mcp initialize answered HTTP ${res.statusCode ?? '?'}: ${body.slice(0, 200)}` };
    return { ok: true, detail: `/mcp initialize answered in ${ms} ms (protocol ${version}); the side panel opens its session there with a panel token` };
  } catch (e) {
    return { ok: false, detail: `/mcp initialize failed: ${(e as Error).message}` };
  }
}

/** the negotiated protocol version, from a JSON or a one-event SSE answer */
function protocolOf(body: string): string | null {
  const json = body.trimStart().startsWith('{') ? body : (/^data: (.*)$/m.exec(body)?.[1] ?? '');
  try {
    const v = (JSON.parse(json) as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

type Json = Record<string, unknown>;

/** /health's redaction block as one line: the rules in force, and the policy version where the daemon has one */
export function describeRedaction(h: Json): { ok: boolean; detail: string } {
  const r = h.redaction as { builtin_rules?: number; user_rules?: number; rules_version?: number; policy_version?: unknown; redaction_failed?: number } | undefined;
  if (!r) return { ok: false, detail: 'the daemon reports no redaction block' };
  const builtin = typeof r.builtin_rules === 'number' ? `${r.builtin_rules} built-in` : 'the built-in rules';
  const user = r.user_rules ?? 0;
  const parts = [`loaded: ${builtin} + ${user} rule${user === 1 ? '' : 's'} of yours`, `rules version ${r.rules_version ?? 0}`];
  if (r.policy_version !== undefined) parts.push(`policy ${String(r.policy_version)}`);
  if (r.redaction_failed) parts.push(`${r.redaction_failed} record(s) failed redaction`);
  return { ok: true, detail: parts.join(', ') };
}

/** /health's extension block as one line: connected, and paired (proved the secret on its connection) */
export function describeExtension(h: Json): { state: 'paired' | 'unpaired' | 'absent'; detail: string } {
  const e = (h.extension ?? {}) as { connected?: boolean; paired?: boolean };
  if (e.connected && e.paired) return { state: 'paired', detail: 'paired and connected' };
  if (e.connected) return { state: 'unpaired', detail: 'connected but NOT paired (run: gasoline pair)' };
  return { state: 'absent', detail: 'not connected' };
}
