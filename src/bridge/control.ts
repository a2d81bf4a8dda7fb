/**
 * `gasoline --stop` and `gasoline --status`: one-shot commands for people, about the daemon on
 * the port. They print to stderr: stdout belongs to MCP JSON-RPC in every mode, and a rule
 * (test/unit/architecture) keeps it so.
 */
import type { Config } from '../config.js';
import { EXIT } from '../exit-codes.js';
import { probe, stopDaemon } from './daemon.js';
import { fetchText } from './http.js';
import { checkBrowserTransport, describeExtension, describeRedaction, type TransportCheck } from './transport-check.js';

const say = (s: string): void => void process.stderr.write(`${s}\n`);

export async function runControl(config: Readonly<Config>, what: 'stop' | 'status'): Promise<number> {
  const { port } = config;
  const p = await probe(port);
  if (p.state === 'none') {
    say(`gasoline: no daemon runs on port ${port}${what === 'status' ? ` (a bridge starts one; or run gasoline --server --port ${port})` : ''}`);
    return EXIT.noDaemon;
  }
  if (p.state === 'foreign') {
    say(`gasoline: port ${port} is used by something that is not gasoline (${p.detail}); nothing ${what === 'stop' ? 'was stopped' : 'to report'}`);
    return EXIT.noDaemon;
  }
  if (what === 'status') return status(port, config.state_dir);
  const { pid, version } = p.info;
  if (!pid) {
    say(`gasoline: the gasoline ${version} on port ${port} does not report its pid (an older version); stop it where it runs`);
    return EXIT.fatal;
  }
  const r = await stopDaemon(port, pid);
  if (r === 'not_gasoline') {
    say(`gasoline: /health on port ${port} names pid ${pid}, which is not a gasoline process; nothing was stopped`);
    return EXIT.fatal;
  }
  if (r === 'timeout') {
    say(`gasoline: sent SIGTERM to the daemon (pid ${pid}), but port ${port} is still taken`);
    return EXIT.fatal;
  }
  say(`gasoline: stopped the daemon on port ${port} (pid ${pid}, version ${version})`);
  return EXIT.ok;
}

type Json = Record<string, unknown>;

async function status(port: number, stateDir: string): Promise<number> {
  let h: Json;
  try {
    const res = await fetchText({ port, method: 'GET', path: '/health', timeoutMs: 3000 });
    h = JSON.parse(res.body) as Json;
  } catch (e) {
    say(`gasoline: the daemon on port ${port} did not answer /health: ${(e as Error).message}`);
    return EXIT.noDaemon;
  }
  const transport = await checkBrowserTransport(port, stateDir, String(h.mode ?? 'server'));
  for (const line of formatStatus(h, transport)) say(line);
  return EXIT.ok;
}

/** /health as a screen for people: who runs, who is connected, what came in; `transport`: whether /mcp answered initialize */
export function formatStatus(h: Json, transport?: TransportCheck): string[] {
  const out: string[] = [];
  const num = (v: unknown): string => (typeof v === 'number' ? String(v) : '?');
  out.push(`gasoline ${String(h.version)} on 127.0.0.1:${num(h.port)} — ${String(h.mode ?? '?')}, pid ${num(h.pid)}, up ${duration(h.uptime_s)}`);
  const ext = (h.extension ?? {}) as { connected?: boolean; producers?: Json[] };
  out.push(`extension: ${describeExtension(h).detail}${ext.producers?.length ? ` (${ext.producers.length} producer${ext.producers.length === 1 ? '' : 's'})` : ''}`);
  // issue 19 item 7: the side panel's door, and the redaction policy every answer passes
  if (transport) {
    const pt = h.panel_tokens as { live?: number } | undefined;
    out.push(`browser transport: ${transport.ok ? 'ok' : 'FAILED'} — ${transport.detail}${pt ? `; ${num(pt.live)} panel token${pt.live === 1 ? '' : 's'} live` : ''}`);
  }
  const red = describeRedaction(h);
  out.push(`redaction policy: ${red.detail}`);
  const pr = h.pairing as { verified_open?: number; unverified_open?: number; unverified_records?: number; unpaired_policy?: string; window?: { open?: boolean; expires_at?: string } } | undefined;
  if (pr) {
    const paired = (ext as { paired?: boolean }).paired === true;
    out.push(`pairing: extension ${paired ? 'paired and verified' : ext.connected ? 'connected but NOT paired (run: gasoline pair)' : 'not connected'}; producers ${num(pr.verified_open)} verified, ${num(pr.unverified_open)} unverified; ${num(pr.unverified_records)} unverified records stored (unpaired: ${pr.unpaired_policy ?? '?'})${pr.window?.open ? `; a pairing window is open until ${pr.window.expires_at ?? '?'}` : ''}`);
  }
  const http = (h.mcp_http ?? {}) as { sessions?: number; list?: Json[] };
  if (typeof http.sessions === 'number') {
    out.push(`bridge sessions: ${http.sessions}`);
    for (const s of http.list ?? []) out.push(`  ${Object.entries(s).map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(', ')}`);
  }
  // the session table (issue 19 item 3): every agent session, its transport, name and state
  const sessions = Array.isArray(h.mcp_sessions) ? (h.mcp_sessions as Json[]) : null;
  if (sessions) {
    out.push(`mcp sessions: ${sessions.filter((s) => s.state !== 'closed').length} open, ${sessions.length} listed`);
    for (const s of sessions) {
      const why = typeof s.degraded_reason === 'string' ? ` (${s.degraded_reason})` : '';
      out.push(`  ${String(s.tag)} ${String(s.transport)} ${String(s.client_id)}${s.client_name ? ` "${String(s.client_name)}"` : ''}: ${String(s.state)}${why}, since ${String(s.created)}, last seen ${String(s.last_seen)}`);
    }
  }
  const ap = h.approvals as { policy?: Json; watch?: boolean; pending?: number } | undefined;
  if (ap?.policy) out.push(`approvals: ${Object.entries(ap.policy).map(([k, v]) => `${k} ${String(v)}`).join(', ')}${ap.watch ? ', WATCH MODE' : ''}; ${num(ap.pending)} waiting for the user`);
  const clients = Array.isArray(h.clients) ? (h.clients as Json[]) : [];
  out.push(`clients: ${clients.length}`);
  for (const c of clients) {
    const extra = Object.entries(c)
      .filter(([k]) => k !== 'id')
      .map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
      .join(', ');
    out.push(`  ${String(c.id)}${extra ? `: ${extra}` : ''}`);
  }
  const kinds = (h.kinds ?? {}) as Record<string, { stored?: number; received?: number; dropped?: number; ring?: { records?: number } }>;
  const rows = Object.entries(kinds).filter(([, k]) => (k.received ?? 0) > 0);
  out.push(rows.length ? 'telemetry (stored / received, in ring):' : 'telemetry: nothing received yet');
  for (const [name, k] of rows) out.push(`  ${name.padEnd(16)} ${num(k.stored)} / ${num(k.received)}, ${num(k.ring?.records)} in ring`);
  return out;
}

function duration(s: unknown): string {
  if (typeof s !== 'number') return '?';
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
