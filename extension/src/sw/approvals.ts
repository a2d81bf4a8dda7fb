/**
 * Approvals in the browser (issue 19 item 4): the server asks, with an `approval_request`
 * command, whether an agent's mutating or destructive action may run (src/domain/commands.ts
 * holds the server's side of the contract). The request waits here until the user decides — in
 * the popup's Approvals list, or on a notification when no popup is open — or its deadline passes
 * (the command registry then answers a timeout, and the server calls it expired). The decision is
 * the command's result. Nothing here runs the action: the server does, once it holds the decision.
 *
 * "Allow agent control" stays the master switch: with it off, a request for an action in the
 * page is refused at once (agent_control_off) instead of asking the user about an action that
 * could not run anyway.
 *
 * Decisions are taken only from our own popup or side panel page (its URL is ours; a content script's sender
 * URL is its page's), never from a page: a page that could answer would approve its own attacker.
 */
import type { CommandContext, CommandRegistry } from './commands.js';
import type { Settings } from '../shared/settings.js';

export type ApprovalChoice = { decision: 'approve' } | { decision: 'approve_window'; minutes: 5 | 15 | 60 } | { decision: 'deny' };

/** What the popup shows of one request. */
export interface ApprovalView {
  id: string;
  action: string;
  class: 'mutating' | 'destructive';
  target: { selector?: string; url?: string; value?: string; text_length?: number; detail?: string };
  client: string;
  client_name?: string;
  tab: { id: number; title: string; url: string } | null;
  expires_at: number;
}

interface Pending {
  view: ApprovalView;
  resolve: (c: ApprovalChoice) => void;
}

const MAX_PENDING = 16;
const NOTE_PREFIX = 'gasoline-approval:';
/** a 1×1 PNG: chrome.notifications insists on an icon and the extension ships none */
const ICON = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

export interface ApprovalDeps {
  settings(): Settings;
  /** the tab an in-page action would run on (the named one, else the active tracked page); throws like a command would */
  targetTab(ctx: CommandContext): Promise<chrome.tabs.Tab & { id: number }>;
  /** the popup list changed (badge) */
  onChange?(count: number): void;
}

export class Approvals {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly deps: ApprovalDeps) {}

  list(): ApprovalView[] {
    return [...this.pending.values()].map((p) => p.view);
  }

  /** The user's choice from the popup or a notification; false when the request is gone (decided, expired). */
  decide(id: string, choice: ApprovalChoice): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    this.drop(id);
    p.resolve(choice);
    return true;
  }

  register(commands: CommandRegistry): void {
    commands.register('approval_request', (params, ctx) => this.request(params, ctx));
    // top level of the worker's first run: a click on a notification can wake a stopped worker
    chrome.notifications?.onButtonClicked.addListener((noteId, button) => {
      if (!noteId.startsWith(NOTE_PREFIX)) return;
      this.decide(noteId.slice(NOTE_PREFIX.length), button === 0 ? { decision: 'approve' } : { decision: 'deny' });
    });
    chrome.notifications?.onClicked.addListener((noteId) => {
      // the body: the popup has the other choices (approve for N minutes)
      if (noteId.startsWith(NOTE_PREFIX)) void chrome.action.openPopup?.().catch(() => undefined);
    });
    chrome.notifications?.onClosed.addListener((noteId, byUser) => {
      // dismissed by the user: the request stays in the popup until its deadline
      void byUser;
      void noteId;
    });
  }

  private async request(params: unknown, ctx: CommandContext): Promise<ApprovalChoice & { tab_id?: number }> {
    const p = check(params);
    if (p.in_page && !this.deps.settings().allow_agent_control) {
      throw coded('agent_control_off', 'agent control is off in the Gasoline extension. Ask the user to open the Gasoline popup and switch on "Allow agent control", then retry.');
    }
    if (this.pending.size >= MAX_PENDING) throw coded('command_failed', `${MAX_PENDING} approvals are already waiting for the user`);
    // an action in the page names the tab it would run on: the user approves for that tab
    const tab = p.in_page ? await this.deps.targetTab(ctx) : null;
    const view: ApprovalView = {
      id: p.approval_id,
      action: p.action,
      class: p.class,
      target: p.target,
      client: p.client,
      ...(p.client_name ? { client_name: p.client_name } : {}),
      tab: tab ? { id: tab.id, title: (tab.title ?? '').slice(0, 120), url: (tab.url ?? '').slice(0, 500) } : null,
      expires_at: p.expires_at,
    };
    const choice = await new Promise<ApprovalChoice>((resolve, reject) => {
      this.pending.set(view.id, { view, resolve });
      this.changed();
      void this.notify(view);
      ctx.signal.addEventListener('abort', () => {
        this.drop(view.id);
        reject(coded('command_timeout', 'nobody decided before the deadline'));
      });
    });
    return { ...choice, ...(tab ? { tab_id: tab.id } : {}) };
  }

  private drop(id: string): void {
    if (!this.pending.delete(id)) return;
    void chrome.notifications?.clear(NOTE_PREFIX + id).catch(() => undefined);
    this.changed();
  }

  private changed(): void {
    this.deps.onChange?.(this.pending.size);
  }

  /** A notification only when neither the popup nor the side panel is open: either lists the request already. */
  private async notify(v: ApprovalView): Promise<void> {
    if (!chrome.notifications) return;
    try {
      const open = await chrome.runtime.getContexts({ documentUrls: [chrome.runtime.getURL('popup.html'), chrome.runtime.getURL('panel.html')] });
      if (open.length > 0) return;
      await chrome.notifications.create(NOTE_PREFIX + v.id, {
        type: 'basic',
        iconUrl: ICON,
        title: `${v.client_name ?? v.client} asks: ${v.action}`,
        message: describe(v),
        buttons: [{ title: 'Approve once' }, { title: 'Deny' }],
        requireInteraction: true,
        priority: 2,
      });
    } catch {
      // no notification service (headless, or the user blocked them): the popup still lists it
    }
  }
}

/** One line of what the action touches; typed text shows only as its length. */
export function describe(v: Pick<ApprovalView, 'target' | 'tab' | 'class'>): string {
  const t = v.target;
  const parts = [
    t.selector ? `on ${t.selector}` : '',
    t.url ? `to ${t.url}` : '',
    t.value !== undefined ? `value "${t.value}"` : '',
    t.text_length !== undefined ? `typing ${t.text_length} characters (not shown)` : '',
    t.detail ?? '',
    v.tab ? `in tab ${v.tab.id} (${v.tab.title || v.tab.url})` : '',
    v.class === 'destructive' ? 'DESTRUCTIVE' : '',
  ];
  return parts.filter(Boolean).join(' · ').slice(0, 500);
}

interface Params {
  approval_id: string;
  action: string;
  class: 'mutating' | 'destructive';
  target: ApprovalView['target'];
  client: string;
  client_name?: string;
  expires_at: number;
  in_page: boolean;
}

/** The server validated these; a worker still reads only what it expects, bounded. */
function check(raw: unknown): Params {
  const p = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const str = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.length <= max ? v : undefined);
  const id = str(p.approval_id, 40);
  if (!id || !/^ap[0-9a-f]{16}$/.test(id)) throw coded('invalid_params', 'approval_id');
  const cls = p.class === 'destructive' ? 'destructive' : p.class === 'mutating' ? 'mutating' : undefined;
  const action = str(p.action, 80);
  if (!cls || !action) throw coded('invalid_params', 'action and class');
  const t = (p.target && typeof p.target === 'object' ? p.target : {}) as Record<string, unknown>;
  const target: ApprovalView['target'] = {};
  const sel = str(t.selector, 1000);
  if (sel) target.selector = sel;
  const url = str(t.url, 8192);
  if (url) target.url = url;
  const value = str(t.value, 1000);
  if (value !== undefined) target.value = value;
  if (typeof t.text_length === 'number') target.text_length = t.text_length;
  const detail = str(t.detail, 200);
  if (detail) target.detail = detail;
  const name = str(p.client_name, 120);
  return {
    approval_id: id,
    action,
    class: cls,
    target,
    client: str(p.client, 64) ?? '?',
    ...(name ? { client_name: name } : {}),
    expires_at: typeof p.expires_at === 'number' ? p.expires_at : 0,
    in_page: p.in_page === true,
  };
}

function coded(code: string, message: string): Error {
  const e = new Error(message);
  // the registry sends `${name}: ${message}`; the server reads the code back from the name
  e.name = code;
  return e;
}
