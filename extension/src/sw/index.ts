/**
 * The service worker: owns the connection to the server, decides which tabs are tracked, takes
 * records from content scripts and hands them to the transport, answers the popup, and
 * dispatches server commands. MV3 may stop it whenever it is idle for 30 s, so every listener is
 * registered synchronously at the top level and waits for `ready`; the keepalive ping keeps it
 * running while connected, and an alarm (only while disconnected) wakes it to retry.
 */
import { CommandRegistry } from './commands.js';
import { registerHandlers } from './handlers.js';
import { Approvals, type ApprovalChoice } from './approvals.js';
import { securityRecord } from './security-headers.js';
import { Tracking } from './tracking.js';
import { Transport, type SocketLike } from './transport.js';
import { handshakeProofs, newNonce, pair, sameHex } from './pairing.js';
import { WakeAlarm } from './wake-alarm.js';
import { ChunkLedger } from './chunk-ledger.js';
import { PanelTokens } from './panel-token.js';
import { DEFAULT_SETTINGS, normalizeSettings, type FileConfig, type PopupStatus, type Settings } from '../shared/settings.js';
import type { CaptureConfig, CaptureReply, RecordsByKind, ToWorker } from '../shared/protocol.js';

declare const __GASOLINE_VERSION__: string;

const SETTINGS_KEY = 'settings';
/** the pairing secret lives in chrome.storage.local, never in sync storage nor in a page's reach */
const PAIRING_KEY = 'pairing';
const WAKE_ALARM = 'gasoline.wake';
/** a fresh session per worker lifetime: what the old worker had unacked died with it */
const SESSION = crypto.randomUUID();

const tracking = new Tracking();
const wakeAlarm = new WakeAlarm(chrome.alarms, WAKE_ALARM);
export const commands = new CommandRegistry();
let approvals: Approvals;
let fileCfg: FileConfig = {};
let settings: Settings = { ...DEFAULT_SETTINGS };
let transport: Transport | null = null;
let pairing: { key: string; paired_at: string } | null = null;
let lastPairing: { ok: boolean; message: string } | null = null;
let pairingBusy = false;
const chunks = new ChunkLedger(chrome.storage.session);
const panelTokens = new PanelTokens({
  send: (frame) => transport?.send(frame) ?? false,
  url: (path) => `http://127.0.0.1:${serverPort()}${path}`,
  newId: () => crypto.randomUUID(),
});

const ready = init();

async function init(): Promise<void> {
  fileCfg = await loadFileConfig();
  const stored = (await chrome.storage.local.get(SETTINGS_KEY))[SETTINGS_KEY];
  settings = normalizeSettings(stored ?? presetSettings());
  pairing = readPairing((await chrome.storage.local.get(PAIRING_KEY))[PAIRING_KEY]);
  tracking.trackAll = fileCfg.trackAll === true;
  await tracking.load();
  startTransport();
}

async function loadFileConfig(): Promise<FileConfig> {
  try {
    const res = await fetch(chrome.runtime.getURL('config.json'));
    if (!res.ok) return {};
    const c = (await res.json()) as unknown;
    return c && typeof c === 'object' ? (c as FileConfig) : {};
  } catch {
    // no config.json: the normal, installed case
    return {};
  }
}

function presetSettings(): Partial<Settings> {
  const p: Partial<Settings> = {};
  if (typeof fileCfg.captureBodies === 'boolean') p.capture_bodies = fileCfg.captureBodies;
  if (typeof fileCfg.captureWebSockets === 'boolean') p.capture_websockets = fileCfg.captureWebSockets;
  return p;
}

function readPairing(raw: unknown): { key: string; paired_at: string } | null {
  const r = raw as { key?: unknown; paired_at?: unknown } | undefined;
  return r && typeof r.key === 'string' && /^[0-9a-f]{64}$/.test(r.key) ? { key: r.key, paired_at: String(r.paired_at ?? '') } : null;
}

/** The secret we prove: one paired in the popup, else the packager's/test harness's preset. */
function pairingSecret(): string | null {
  return pairing?.key ?? (typeof fileCfg.pairingKey === 'string' && /^[0-9a-f]{64}$/.test(fileCfg.pairingKey) ? fileCfg.pairingKey : null);
}

/** The popup's Pair button (a code) or its trust-on-first-use confirmation (null). */
async function runPairing(code: string | null): Promise<void> {
  if (pairingBusy) return;
  pairingBusy = true;
  try {
    const r = await pair({ url: `ws://127.0.0.1:${serverPort()}/ws`, version: __GASOLINE_VERSION__, createSocket: (url) => new WebSocket(url) as unknown as SocketLike, code });
    if (r.ok) {
      pairing = { key: r.key, paired_at: new Date().toISOString() };
      await chrome.storage.local.set({ [PAIRING_KEY]: pairing });
      lastPairing = { ok: true, message: `paired with the gasoline on port ${serverPort()}` };
      transport?.poke();
    } else lastPairing = { ok: false, message: `${r.code}: ${r.message}` };
  } finally {
    pairingBusy = false;
  }
}

function serverPort(): number {
  return fileCfg.port ?? settings.server_port;
}

function startTransport(): void {
  transport?.stop();
  let lastKind = '';
  const t = new Transport({
    url: `ws://127.0.0.1:${serverPort()}/ws`,
    version: __GASOLINE_VERSION__,
    session: SESSION,
    createSocket: (url) => new WebSocket(url) as unknown as SocketLike,
    keepaliveMs: fileCfg.keepaliveMs ?? 20_000,
    onStatus: (s) => {
      if (s.state.kind === lastKind) return;
      lastKind = s.state.kind;
      const up = s.state.kind === 'connected';
      // a token is bound to the connection that asked for it: a drop answers whoever still waits
      if (!up) panelTokens.disconnected();
      // While disconnected, an alarm brings a stopped worker back to retry. While connected the
      // keepalive does that job, and an alarm would keep an idle worker alive by itself.
      void wakeAlarm.set(!up);
      void chrome.action.setBadgeText({ text: up ? '' : '!' }).catch(() => undefined);
      void chrome.action.setBadgeBackgroundColor({ color: '#c0392b' }).catch(() => undefined);
    },
    auth: { key: pairingSecret, nonce: newNonce, proofs: handshakeProofs, same: sameHex },
    onOther: (f) => panelTokens.onFrame(f),
    onCommand: (cmd) => {
      void commands.dispatch(cmd).then((r) => t.sendResult(r));
    },
  });
  transport = t;
  t.start();
}

function captureConfig(tabId: number | undefined): CaptureConfig {
  return {
    t: 'config',
    on: tracking.isTracked(tabId),
    ws: settings.capture_websockets,
    bodies: settings.capture_bodies,
    server_port: serverPort(),
    body_budget_ms: fileCfg.bodyBudgetMs ?? 5,
    perf_delay_ms: fileCfg.perfDelayMs ?? 2000,
  };
}

async function broadcastConfig(): Promise<void> {
  const tabs = await chrome.tabs.query({});
  for (const tab of tabs) {
    if (tab.id === undefined) continue;
    chrome.tabs.sendMessage(tab.id, captureConfig(tab.id)).catch(() => undefined);
  }
}

async function intake(tabId: number | undefined, m: Extract<ToWorker, { t: 'capture' }>): Promise<CaptureReply> {
  const tracked = tracking.isTracked(tabId);
  if (!tracked) return { ok: true, tracked };
  // A content script resends a chunk whose reply it lost, to this worker or the next: take each once.
  if (await chunks.take(m.id)) transport?.add(tabId, m.page_url, m.records as RecordsByKind);
  return { ok: true, tracked };
}

async function popupStatus(tabId: number | undefined): Promise<PopupStatus> {
  return {
    settings,
    tab: tabId === undefined ? null : { id: tabId, tracked: tracking.isTracked(tabId), reason: tracking.reason(tabId) },
    tracking: { mode: tracking.mode, chosen: tracking.chosenCount() },
    transport: transport!.status(),
    pairing: { paired: pairingSecret() !== null, paired_at: pairing?.paired_at ?? null, preset: !pairing && pairingSecret() !== null, last: lastPairing, busy: pairingBusy },
  };
}

async function handle(m: ToWorker, sender: chrome.runtime.MessageSender): Promise<unknown> {
  await ready;
  switch (m.t) {
    case 'page_hello':
      return captureConfig(sender.tab?.id);
    case 'capture':
      return intake(sender.tab?.id, m);
    case 'status':
      return popupStatus(m.tab_id);
    case 'approvals':
    case 'approval_decide':
      return approvalMessage(m, sender);
    case 'pair':
      await runPairing(m.code);
      return popupStatus(undefined);
    case 'forget_pairing':
      pairing = null;
      lastPairing = null;
      await chrome.storage.local.remove(PAIRING_KEY);
      // whatever holds the port now gets nothing until we pair again
      startTransport();
      return popupStatus(undefined);
    case 'set_settings':
      // agent control is among them: only our popup switches it, never a content script
      if (!fromOurPage(sender, 'popup.html')) return { error: 'settings are changed in the Gasoline popup only' };
      await saveSettings(m.patch);
      return { ok: true };
    case 'set_tab_tracked':
      tracking.choose(m.tab_id, m.on);
      await broadcastConfig();
      return popupStatus(m.tab_id);
    default:
      return { error: `unknown message ${(m as { t?: unknown }).t as string}` };
  }
}

/** Whether a message comes from one of our own pages: a content script's sender URL is its page's. */
function fromOurPage(sender: chrome.runtime.MessageSender, ...pages: string[]): boolean {
  return sender.id === chrome.runtime.id && pages.some((p) => (sender.url ?? '').startsWith(chrome.runtime.getURL(p)));
}

/** Only our own popup or side panel lists or decides approvals. */
function approvalMessage(m: Extract<ToWorker, { t: 'approvals' | 'approval_decide' }>, sender: chrome.runtime.MessageSender): unknown {
  if (!fromOurPage(sender, 'popup.html', 'panel.html')) return { error: 'approvals are decided in the Gasoline popup or side panel only' };
  if (m.t === 'approvals') return { approvals: approvals.list() };
  const choice: ApprovalChoice = m.decision === 'approve_window' ? { decision: 'approve_window', minutes: m.minutes === 15 || m.minutes === 60 ? m.minutes : 5 } : { decision: m.decision === 'approve' ? 'approve' : 'deny' };
  return { ok: approvals.decide(m.id, choice) };
}

/**
 * The side panel's MCP token (contract A in docs/PROTOCOL.md): only our panel page may ask; a
 * token is the daemon's door for a whole MCP session, and a page must never hold one.
 */
async function panelToken(sender: chrome.runtime.MessageSender): Promise<unknown> {
  if (!fromOurPage(sender, 'panel.html')) return { ok: false, error: 'forbidden', message: 'panel tokens go to the Gasoline side panel only' };
  await ready;
  return panelTokens.request();
}

chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if ((msg as { type?: unknown } | null)?.type === 'panel_token') {
    panelToken(sender).then(sendResponse, (e: unknown) => sendResponse({ ok: false, error: 'extension_error', message: String(e) }));
    return true;
  }
  handle(msg as ToWorker, sender).then(sendResponse, (e: unknown) => sendResponse({ error: String(e) }));
  return true;
});

/** Settings in force from now on: a new port reconnects, and every tab hears the capture toggles. */
async function applySettings(next: Settings): Promise<void> {
  const before = serverPort();
  settings = next;
  if (serverPort() !== before) startTransport();
  await broadcastConfig();
}

let settingsWrites: Promise<void> = Promise.resolve();

/**
 * The popup's toggles, merged into what is stored one write at a time (two quick clicks must not
 * write over each other), and in force before the popup is answered, so its next status shows them.
 */
function saveSettings(patch: unknown): Promise<void> {
  const p = (patch && typeof patch === 'object' ? patch : {}) as Record<string, unknown>;
  settingsWrites = settingsWrites
    .catch(() => undefined)
    .then(async () => {
      const stored = (await chrome.storage.local.get(SETTINGS_KEY))[SETTINGS_KEY];
      const cur = normalizeSettings(stored ?? presetSettings());
      const next = normalizeSettings({ ...cur, ...Object.fromEntries(Object.entries(p).filter(([k]) => k in cur)) });
      await chrome.storage.local.set({ [SETTINGS_KEY]: next });
      await applySettings(next);
    });
  return settingsWrites;
}

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local' || !changes[SETTINGS_KEY]) return;
  void ready.then(() => applySettings(normalizeSettings(changes[SETTINGS_KEY]!.newValue)));
});

chrome.tabs.onActivated.addListener(({ tabId }) => {
  void ready.then(async () => {
    if (tracking.setActive(tabId)) await broadcastConfig();
  });
});

chrome.windows.onFocusChanged.addListener((windowId) => {
  // WINDOW_ID_NONE: focus went to another app (the IDE); keep following the last tab.
  if (windowId === chrome.windows.WINDOW_ID_NONE) return;
  void ready.then(async () => {
    const [tab] = await chrome.tabs.query({ active: true, windowId });
    if (tab?.id !== undefined && tracking.setActive(tab.id)) await broadcastConfig();
  });
});

chrome.tabs.onRemoved.addListener((tabId) => {
  void ready.then(() => tracking.forget(tabId));
});

chrome.alarms.onAlarm.addListener((a) => {
  if (a.name === WAKE_ALARM) void ready.then(() => transport?.poke());
});

chrome.runtime.onStartup.addListener(() => void ready);

const OPEN_PANEL_MENU = 'gasoline.open-panel';
// the toolbar button's right-click menu: the other way to the side panel (a click there is a user gesture)
chrome.contextMenus.onClicked.addListener((info, tab) => {
  if (info.menuItemId === OPEN_PANEL_MENU && tab?.windowId !== undefined) void chrome.sidePanel.open({ windowId: tab.windowId }).catch(() => undefined);
});

chrome.runtime.onInstalled.addListener(() => {
  chrome.contextMenus.create({ id: OPEN_PANEL_MENU, title: 'Open the Gasoline side panel', contexts: ['action'] }, () => void chrome.runtime.lastError);
  // Tabs that were open before install/update have no content scripts; give them ours.
  void ready.then(async () => {
    const tabs = await chrome.tabs.query({ url: ['http://*/*', 'https://*/*'] });
    for (const tab of tabs) {
      if (tab.id === undefined) continue;
      const target = { tabId: tab.id, allFrames: true };
      try {
        await chrome.scripting.executeScript({ target, files: ['inject.js'], world: 'MAIN' });
        await chrome.scripting.executeScript({ target, files: ['content.js'] });
      } catch {
        // chrome:// pages, the web store, or a tab that went away
      }
    }
  });
});

// Document headers and Set-Cookie attributes, which no page script can see (security-headers.ts).
// Registered at the top level so a response can wake a stopped worker; "extraHeaders" is what
// lets Chrome show Set-Cookie to an extension at all.
chrome.webRequest.onHeadersReceived.addListener(
  (d) => {
    void ready.then(() => {
      if (!tracking.isTracked(d.tabId)) return;
      const host = new URL(d.url).host;
      // the server's own port is never page traffic
      if (host === `127.0.0.1:${serverPort()}` || host === `localhost:${serverPort()}`) return;
      const rec = securityRecord(d);
      if (!rec) return;
      const page = d.type === 'main_frame' ? d.url : ((d as { documentUrl?: string }).documentUrl ?? d.initiator ?? d.url);
      transport?.add(d.tabId, page, { network_bodies: [rec] });
    });
    return undefined;
  },
  { urls: ['http://*/*', 'https://*/*'], types: ['main_frame', 'sub_frame', 'xmlhttprequest'] },
  ['responseHeaders', 'extraHeaders'],
);

commands.register('extension_status', async () => popupStatus(undefined));
const { targetTab } = registerHandlers(commands, {
  settings: () => settings,
  tracking,
  emitActions: (tabId, pageUrl, actions) => transport?.add(tabId, pageUrl, { actions }),
});
approvals = new Approvals({
  settings: () => settings,
  targetTab,
  // a waiting approval shows on the toolbar icon, so a closed popup still says something waits
  onChange: (n) => void chrome.action.setBadgeText({ text: n > 0 ? String(n) : '' }).catch(() => undefined),
});
approvals.register(commands);
