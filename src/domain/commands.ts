/**
 * On-demand commands (PROTOCOL.md §1 `cmd` / `result`): what the server may ask the extension,
 * with which parameters, and the exact shape each answer must have. The extension is outside our
 * trust boundary, so every answer is parsed against these bounded schemas before anyone reads it.
 * Limits here are the product's promises (≤ 50 matches, text ≤ 500 chars, ≤ 10 nodes per rule…).
 */
import { z } from 'zod';

export const COMMAND_TYPES = ['dom_query', 'page_info', 'a11y_audit', 'interact', 'approval_request'] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

export const INTERACT_ACTIONS = ['navigate', 'refresh', 'back', 'forward', 'click', 'type', 'select', 'scroll_to', 'wait_for'] as const;
export type InteractAction = (typeof INTERACT_ACTIONS)[number];

export const LIMITS = {
  matches: 50,
  text: 500,
  childText: 100,
  children: 20,
  depth: 5,
  attributes: 30,
  styles: 60,
  properties: 30,
  forms: 20,
  fields: 50,
  headings: 50,
  rules: 100,
  nodesPerRule: 10,
  html: 200,
  passes: 200,
  /** WCAG criteria tags per rule */
  tags: 12,
  /** a rule's (or element's) fix text, shortened by the extension */
  fix: 300,
} as const;

/** deadline per type when the caller names none, ms */
export const DEFAULT_DEADLINE_MS: Record<CommandType, number> = { dom_query: 10_000, page_info: 10_000, a11y_audit: 30_000, interact: 10_000, approval_request: 120_000 };

const s = (max: number) => z.string().max(max);
const selector = s(1000).min(1);
const count = z.number().int().min(0).max(1e9);
const coord = z.number().finite();

// ---------------------------------------------------------------- parameters

export const DomQueryParams = z.object({
  selector,
  include_styles: z.boolean().optional(),
  include_children: z.boolean().optional(),
  max_depth: z.number().int().min(1).max(LIMITS.depth).optional(),
  /** computed style properties to read instead of the default layout subset */
  properties: z.array(s(64).regex(/^-?[a-z][a-z0-9-]*$/i, 'a CSS property name')).max(LIMITS.properties).optional(),
});

export const PageInfoParams = z.object({});

export const A11yParams = z.object({
  scope: selector.optional(),
  tags: z.array(s(40).regex(/^[a-z0-9.-]+$/i, 'an axe tag like wcag2aa')).max(20).optional(),
  include_passes: z.boolean().optional(),
  force_refresh: z.boolean().optional(),
});

export const InteractParams = z
  .object({
    action: z.enum(INTERACT_ACTIONS),
    selector: selector.optional(),
    text: s(10_000).optional(),
    value: s(1000).optional(),
    url: s(8192).optional(),
    timeout_ms: z.number().int().min(100).max(30_000).optional(),
  })
  .superRefine((p, ctx) => {
    const need = (field: 'selector' | 'text' | 'value' | 'url'): void => {
      if (p[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `${p.action} needs ${field}` });
    };
    if (['click', 'type', 'select', 'wait_for'].includes(p.action)) need('selector');
    if (p.action === 'type') need('text');
    if (p.action === 'select') need('value');
    if (p.action === 'navigate') {
      need('url');
      if (p.url !== undefined && !/^https?:\/\//i.test(p.url)) ctx.addIssue({ code: 'custom', path: ['url'], message: 'navigate only to http(s) URLs' });
    }
  });

/**
 * approval_request (issue 19 item 4): the user is asked, in the extension, whether a mutating or
 * destructive action may run. It names what the user must judge — the action, its target, the tab
 * and the asking client — and never the typed text itself: a password the agent types would
 * otherwise sit in a notification (text_length says how much is typed instead).
 */
export const ApprovalRequestParams = z.object({
  approval_id: s(40).regex(/^ap[0-9a-f]{16}$/),
  /** "interact click", "configure clear scope:all" */
  action: s(80),
  class: z.enum(['mutating', 'destructive']),
  target: z
    .object({
      selector: selector.optional(),
      url: s(8192).optional(),
      value: s(1000).optional(),
      text_length: z.number().int().min(0).max(10_000).optional(),
      detail: s(200).optional(),
    })
    .strict(),
  /** the client as it introduced itself (initialize clientInfo) and its id */
  client: s(64),
  client_name: s(120).optional(),
  /** when the request lapses, ms since the epoch */
  expires_at: z.number().int().min(0),
  /** true for actions in the page: the extension shows them only while agent control is on */
  in_page: z.boolean(),
});

export const PARAMS = { dom_query: DomQueryParams, page_info: PageInfoParams, a11y_audit: A11yParams, interact: InteractParams, approval_request: ApprovalRequestParams } as const;
export type CommandParams<T extends CommandType> = z.infer<(typeof PARAMS)[T]>;

// ---------------------------------------------------------------- results

const Box = z.object({ x: coord, y: coord, width: coord, height: coord });
const Styles = z.record(s(64), s(500)).refine((o) => Object.keys(o).length <= LIMITS.styles, `at most ${LIMITS.styles} style properties`);
const Attributes = z.record(s(128), s(LIMITS.text)).refine((o) => Object.keys(o).length <= LIMITS.attributes, `at most ${LIMITS.attributes} attributes`);

const childBase = { tag: s(64), id: s(256).optional(), classes: z.array(s(128)).max(20).optional(), text: s(LIMITS.childText).optional() };
type Child = { tag: string; id?: string | undefined; classes?: string[] | undefined; text?: string | undefined; children?: Child[] | undefined; children_truncated?: number | undefined };
/** Depth is bounded by construction: at the last level `children` is refused, not just stripped. */
function childSchema(depth: number): z.ZodType<Child> {
  if (depth <= 1) return z.object({ ...childBase, children: z.never(`children deeper than ${LIMITS.depth} levels`).optional() }) as z.ZodType<Child>;
  return z.object({ ...childBase, children: z.array(childSchema(depth - 1)).max(LIMITS.children).optional(), children_truncated: count.optional() });
}

export const DomNode = z.object({
  tag: s(64),
  id: s(256).optional(),
  classes: z.array(s(128)).max(20).optional(),
  text: s(LIMITS.text).optional(),
  text_truncated: z.boolean().optional(),
  /** unique in the document when queried (checked there): what interact takes; optional: older extensions send none */
  selector: selector.optional(),
  attributes: Attributes.optional(),
  bbox: Box,
  visible: z.boolean(),
  styles: Styles.optional(),
  children: z.array(childSchema(LIMITS.depth)).max(LIMITS.children).optional(),
  children_truncated: count.optional(),
});

export const DomQueryResult = z.object({
  url: s(8192),
  title: s(1024),
  match_count: count,
  matches: z.array(DomNode).max(LIMITS.matches),
});

export const PageInfoResult = z.object({
  url: s(8192),
  title: s(1024),
  viewport: z.object({ width: coord, height: coord }),
  scroll: z.object({ x: coord, y: coord }),
  document_height: coord,
  forms: z
    .array(
      z.object({
        id: s(256).optional(),
        name: s(256).optional(),
        action: s(2048).optional(),
        method: s(16).optional(),
        fields: z.array(z.object({ tag: s(32), type: s(32).optional(), name: s(256).optional(), id: s(256).optional(), label: s(200).optional(), required: z.boolean().optional() })).max(LIMITS.fields),
        fields_truncated: count.optional(),
      }),
    )
    .max(LIMITS.forms),
  headings: z.array(z.object({ level: z.number().int().min(1).max(6), text: s(200) })).max(LIMITS.headings),
  counts: z.object({ links: count, images: count, interactive: count, forms: count }),
});

export const IMPACTS = ['critical', 'serious', 'moderate', 'minor'] as const;

export const A11yResult = z.object({
  url: s(8192),
  engine: s(64),
  scope: s(1000).optional(),
  violations: z
    .array(
      z.object({
        id: s(128),
        impact: z.enum(IMPACTS).nullable(),
        help: s(500),
        help_url: s(500).optional(),
        /** the WCAG criteria (wcag2aa, wcag143…) and best-practice; optional: older extensions send none */
        tags: z.array(s(40)).max(LIMITS.tags).optional(),
        /** what fails, shortened: "any of: reason; reason" (the first element's; each element has its own) */
        fix: s(LIMITS.fix).optional(),
        node_count: count,
        nodes: z.array(z.object({ selector: s(1000), html: s(LIMITS.html), failure_summary: s(2000) })).max(LIMITS.nodesPerRule),
      }),
    )
    .max(LIMITS.rules),
  passes: z.array(z.object({ id: s(128), node_count: count })).max(LIMITS.passes).optional(),
  incomplete: count.optional(),
  /** how many rules passed, need manual review, or had nothing to check; optional: older extensions send none */
  counts: z.object({ passes: count, incomplete: count, inapplicable: count }).optional(),
  /** set by the extension when the answer came from its 30 s cache */
  cached_age_ms: count.optional(),
});

export const InteractResult = z.object({
  action: z.enum(INTERACT_ACTIONS),
  url: s(8192).optional(),
  title: s(1024).optional(),
  detail: s(500).optional(),
});

/** The user's decision; tab_id is the tab the extension showed the request for (it resolves one when the call named none). */
export const ApprovalDecisionResult = z.discriminatedUnion('decision', [
  z.object({ decision: z.literal('approve'), tab_id: z.number().int().min(0).optional() }).strict(),
  z.object({ decision: z.literal('approve_window'), minutes: z.union([z.literal(5), z.literal(15), z.literal(60)]), tab_id: z.number().int().min(0).optional() }).strict(),
  z.object({ decision: z.literal('deny'), tab_id: z.number().int().min(0).optional() }).strict(),
]);

export const RESULTS = { dom_query: DomQueryResult, page_info: PageInfoResult, a11y_audit: A11yResult, interact: InteractResult, approval_request: ApprovalDecisionResult } as const;
export type CommandResult<T extends CommandType> = z.infer<(typeof RESULTS)[T]>;

/** Codes the extension may put in front of an error (`code: message`); anything else is command_failed. */
/** the codes an extension may put before its own error text ("code: message"); others read as command_failed */
export const EXTENSION_ERROR_CODES = ['agent_control_off', 'result_too_large', 'invalid_params', 'command_failed', 'command_timeout', 'extension_disconnected'] as const;
export const MAX_ERROR_CHARS = 2000;
