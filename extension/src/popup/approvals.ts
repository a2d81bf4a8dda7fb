/**
 * The popup's Approvals block (issue 19 item 4): what agents ask to do, each with Approve once,
 * Approve this action on this tab for 5, 15 or 60 minutes, and Deny. The list comes from the
 * service worker (sw/approvals.ts), which holds each request until the user decides or it lapses.
 * Rebuilt only when the set of requests changes, so a button under the pointer is never replaced
 * by the popup's once-a-second refresh.
 */
import type { ApprovalView } from '../sw/approvals.js';
import { describe } from '../sw/approvals.js';

let shown = '';

/** Also used by the side panel (same element ids); answers how many requests wait. */
export async function refreshApprovals(): Promise<number> {
  const r = (await chrome.runtime.sendMessage({ t: 'approvals' })) as { approvals?: ApprovalView[] };
  const list = r.approvals ?? [];
  const key = list.map((a) => a.id).join(',');
  if (key === shown) return list.length;
  shown = key;
  const section = document.getElementById('approvals')!;
  section.hidden = list.length === 0;
  document.getElementById('approval-list')!.replaceChildren(...list.map(item));
  return list.length;
}

function item(a: ApprovalView): HTMLLIElement {
  const li = document.createElement('li');
  li.dataset.approval = a.id;
  const what = document.createElement('div');
  what.className = `what${a.class === 'destructive' ? ' destructive' : ''}`;
  // every string here is the agent's or the page's: textContent only
  what.textContent = `${a.client_name ?? a.client} asks: ${a.action}`;
  const detail = document.createElement('div');
  detail.className = 'hint';
  detail.textContent = `${describe(a)} · lapses ${new Date(a.expires_at).toLocaleTimeString()}`;
  const buttons = document.createElement('div');
  buttons.className = 'buttons';
  const button = (label: string, name: string, send: () => Promise<unknown>): HTMLButtonElement => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = label;
    b.name = name;
    b.addEventListener('click', () => {
      for (const x of buttons.querySelectorAll('button')) x.disabled = true;
      void send().then(() => refreshApprovals());
    });
    return b;
  };
  const decide = (decision: 'approve' | 'approve_window' | 'deny', minutes?: 5 | 15 | 60) => () => chrome.runtime.sendMessage({ t: 'approval_decide', id: a.id, decision, ...(minutes ? { minutes } : {}) });
  buttons.append(button('Approve once', 'approve', decide('approve')));
  // a window covers this client's same action on this tab: only meaningful for an action in a tab
  if (a.tab) for (const m of [5, 15, 60] as const) buttons.append(button(`Approve for ${m} min`, `approve-${m}`, decide('approve_window', m)));
  buttons.append(button('Deny', 'deny', decide('deny')));
  li.append(what, detail, buttons);
  return li;
}
