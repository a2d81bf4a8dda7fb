/** The toolbar popup: connection state and counters, tab tracking, capture toggles. */
import { LINK_TEXT, type PopupStatus, type Settings } from '../shared/settings.js';
import type { ToWorker } from '../shared/protocol.js';
import { refreshApprovals } from './approvals.js';
import { renderPairing, wirePairing } from './pairing.js';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const TOGGLES = ['capture_websockets', 'capture_bodies', 'allow_agent_control'] as const;

let tabId: number | undefined;

function ask(m: ToWorker): Promise<PopupStatus> {
  return chrome.runtime.sendMessage(m) as Promise<PopupStatus>;
}

/**
 * The worker reads, merges and writes: the message leaves with the click itself. A read-modify-write
 * here was lost whenever the popup closed before the read came back (a user closing it right
 * after a click; 2 in 40 such closes on a loaded machine), while the checkbox had shown the change.
 */
async function saveSettings(patch: Partial<Settings>): Promise<void> {
  await chrome.runtime.sendMessage({ t: 'set_settings', patch } satisfies ToWorker);
}

function render(s: PopupStatus): void {
  const st = s.transport.state;
  $('dot').className = `dot ${st.kind}`;
  $('state').textContent = LINK_TEXT[st.kind] ?? st.kind;
  $('server').textContent = `${s.transport.url}${st.kind === 'connected' ? ` · server ${st.server_version}` : ''}`;
  renderPairing(s);
  $('error').textContent = st.kind === 'backoff' ? `${st.last_error}; retrying in ${Math.max(0, Math.round((st.retry_at - Date.now()) / 1000))} s — is \`gasoline\` running on this port?` : '';

  const track = $<HTMLInputElement>('track-tab');
  track.disabled = !s.tab || s.tracking.mode === 'all';
  track.checked = Boolean(s.tab?.tracked);
  $('track-reason').textContent = s.tab ? s.tab.reason : 'no tab';

  for (const k of TOGGLES) $<HTMLInputElement>(k).checked = s.settings[k];
  const port = $<HTMLInputElement>('server_port');
  if (document.activeElement !== port) port.value = String(s.settings.server_port);

  const c = s.transport.counters;
  const rows: Array<[string, number]> = [
    ['records sent and stored', c.records_accepted],
    ['rejected by server', c.records_rejected],
    ['dropped in extension', c.records_dropped],
    ['waiting to send', s.transport.pending_records],
    ['batches awaiting ack', s.transport.unacked_batches],
  ];
  const dl = $('counters');
  dl.replaceChildren(
    ...rows.flatMap(([k, v]) => {
      const dt = document.createElement('dt');
      dt.textContent = k;
      const dd = document.createElement('dd');
      dd.textContent = String(v);
      return [dt, dd];
    }),
  );
}

async function refresh(): Promise<void> {
  try {
    render(await ask({ t: 'status', ...(tabId !== undefined ? { tab_id: tabId } : {}) }));
  } catch (e) {
    $('state').textContent = `extension error: ${String(e)}`;
  }
}

async function main(): Promise<void> {
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  tabId = tab?.id;
  const windowId = tab?.windowId;
  // sidePanel.open must run inside the click itself (a user gesture): nothing awaited before it
  $('open-panel').addEventListener('click', () => {
    if (windowId === undefined) return;
    void chrome.sidePanel.open({ windowId }).then(() => window.close(), (e: unknown) => ($('error').textContent = `cannot open the side panel: ${String(e)}`));
  });
  $<HTMLInputElement>('track-tab').addEventListener('change', async (e) => {
    if (tabId === undefined) return;
    render(await ask({ t: 'set_tab_tracked', tab_id: tabId, on: (e.target as HTMLInputElement).checked }));
  });
  for (const k of TOGGLES) {
    $<HTMLInputElement>(k).addEventListener('change', (e) => void saveSettings({ [k]: (e.target as HTMLInputElement).checked }).then(refresh));
  }
  $<HTMLInputElement>('server_port').addEventListener('change', (e) => {
    const port = Number((e.target as HTMLInputElement).value);
    if (Number.isInteger(port) && port > 0 && port < 65536) void saveSettings({ server_port: port }).then(refresh);
  });
  wirePairing(ask, render);
  await refresh();
  await refreshApprovals().catch(() => undefined);
  setInterval(() => {
    void refresh();
    void refreshApprovals().catch(() => undefined);
  }, 1000);
}

void main();
