/**
 * Every tool action, classed once (issue 19 item 4): what the approval gate asks the user about.
 *
 *   read_only    — changes nothing anyone else sees: reads, and what only moves the caller's own
 *                  view (its cursors, checkpoints, own noise rules, tab filter, streaming, store)
 *   mutating     — acts in the user's browser, or changes what every client of the daemon sees
 *   destructive  — loses data for everyone, or exposes what was hidden (cannot be undone)
 *
 * The table is keyed by tool, then by the argument that names the action (observe `what`, analyze
 * `target`, configure and interact `action`); an entry that depends on further arguments is a
 * function of them. test/unit/domain/action-classes.test.ts walks every enum value of every tool
 * schema through `classify`, so an action added to a schema without a row here fails that test;
 * and an unknown action classes as destructive (the most careful answer), never as read-only.
 */
export const ACTION_CLASSES_ORDER = ['read_only', 'mutating', 'destructive'] as const;
export type ActionClass = (typeof ACTION_CLASSES_ORDER)[number];

type Args = Readonly<Record<string, unknown>>;
type Rule = ActionClass | ((a: Args) => ActionClass);

interface ToolRow {
  /** the argument whose value names the action */
  readonly key: string;
  readonly actions: Readonly<Record<string, Rule>>;
}

const READ: ActionClass = 'read_only';

export const ACTION_TABLE: Readonly<Record<string, ToolRow>> = {
  // every observe view reads the rings or the caller's own command results
  observe: {
    key: 'what',
    actions: Object.fromEntries(
      ['summary', 'errors', 'logs', 'network', 'network_bodies', 'websocket_events', 'websocket_status', 'actions', 'performance', 'page', 'timeline', 'error_bundles', 'command_result', 'ci'].map((w) => [w, READ]),
    ),
  },
  // dom, page_info and accessibility run a script in the page, but one that only reads it (axe
  // included): nothing the user or the app sees changes
  // triage asks a model about what was captured: it changes nothing in the page or the store (what
  // may leave the machine is the redaction gateway's business, src/model/gateway.ts)
  analyze: {
    key: 'target',
    actions: Object.fromEntries(['performance', 'changes', 'error_clusters', 'security', 'dom', 'page_info', 'accessibility', 'triage'].map((t) => [t, READ])),
  },
  configure: {
    key: 'action',
    actions: {
      health: READ,
      // mine: the caller's own cursors; all: empties the shared rings for every client, unrecoverable
      clear: (a) => ((a.scope ?? 'mine') === 'all' ? 'destructive' : READ),
      // checkpoints are the caller's own
      checkpoint: READ,
      // an own rule hides records from the caller only; a global one hides them from every agent
      // (adding could blind another agent to an error), and removing one changes every agent's
      // view too — both are mutating, neither loses data
      noise_rule: (a) => ((a.noise_action ?? 'list') !== 'list' && a.scope === 'global' ? 'mutating' : READ),
      store: READ,
      // list/test read; add only ever hides more (the safe direction: an over-broad rule blanks
      // text, it exposes nothing, and a refused pattern is refused without bothering the user);
      // remove exposes what the rule hid, for every client, from then on: destructive
      redaction: (a) => ((a.redaction_action ?? 'list') === 'remove' ? 'destructive' : READ),
      // the caller's own push stream
      streaming: READ,
      // scope:"all" here clears the caller's own filter (not the buffers)
      tab_filter: READ,
      // the status reads; a value switches fetching for the whole daemon
      source_maps: (a) => (a.value === undefined ? READ : 'mutating'),
      // writes a redacted copy of what the caller may already read, 0600, only where the path
      // rules allow (src/mcp/tools/export-har.ts): no one else's view changes
      export_har: READ,
    },
  },
  interact: {
    key: 'action',
    actions: {
      navigate: 'mutating',
      refresh: 'mutating',
      back: 'mutating',
      forward: 'mutating',
      click: 'mutating',
      type: 'mutating',
      select: 'mutating',
      // scrolling moves the viewport only, as reading a long page would; no data of the app or the
      // user changes (a page that loads more on scroll loads what the user would see scrolling)
      scroll_to: READ,
      // waits for an element and reads: nothing is touched
      wait_for: READ,
    },
  },
};

export interface Classified {
  readonly tool: string;
  /** the action's name as the user sees it in an approval: "interact click", "configure clear scope:all" */
  readonly label: string;
  /** the value of the tool's action argument */
  readonly action: string;
  readonly class: ActionClass;
}

export function classify(tool: string, args: Args): Classified {
  const row = Object.hasOwn(ACTION_TABLE, tool) ? ACTION_TABLE[tool] : undefined;
  const action = row ? String(args[row.key] ?? '') : '';
  const rule = row && Object.hasOwn(row.actions, action) ? row.actions[action] : undefined;
  const cls: ActionClass = rule === undefined ? 'destructive' : typeof rule === 'function' ? rule(args) : rule;
  return { tool, action, label: label(tool, action, args), class: cls };
}

/** The qualifier that makes a configure action's class (clear scope:all, redaction remove). */
function label(tool: string, action: string, a: Args): string {
  if (tool !== 'configure') return `${tool} ${action}`;
  const sub = action === 'clear' ? (a.scope ? `scope:${String(a.scope)}` : '') : action === 'noise_rule' ? [a.noise_action, a.scope === 'global' ? 'global' : ''].filter(Boolean).join(' ') : action === 'redaction' ? String(a.redaction_action ?? '') : action === 'source_maps' && a.value !== undefined ? String(a.value) : '';
  return `${tool} ${action}${sub ? ` ${sub}` : ''}`;
}
