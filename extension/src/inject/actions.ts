/**
 * User actions → `actions`: click, input, keypress (navigation keys only), navigate, scroll,
 * select, submit. Passive capture-phase listeners: we see events the page stops, and never
 * change what the page sees. Values of password and card fields are never read.
 */
import { cfg, emit, flush } from './channel.js';
import { installClickEffects, settle, watchable, watchClick } from './click-effect.js';
import { selectorsFor } from './selectors.js';
import { guard, now } from './util.js';
import { AGENT_MARK, type Json } from '../shared/protocol.js';

const NAV_KEYS = new Set(['Enter', 'Tab', 'Escape', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'PageUp', 'PageDown', 'Home', 'End']);
const SCROLL_THROTTLE_MS = 250;
/** typing is one action per field and pause, not one per keystroke */
const INPUT_SETTLE_MS = 500;
const VALUE_MAX = 256;

// taken at document_start, before page scripts could replace Date.now
const clock = Date.now.bind(Date);

/** Inside the window the service worker's interact opened (its expiry is the mark's value). */
function agentWindow(): boolean {
  const until = Number(document.documentElement.getAttribute(AGENT_MARK));
  return until > 0 && clock() <= until;
}

/** Events the agent dispatched: the worker records them itself, as source "agent". */
function agentDriven(e: Event): boolean {
  return !e.isTrusted && agentWindow();
}

const SENSITIVE_NAME = /pass(word|wd|code)?|pwd|secret|token|card|cc-?(num|number|csc|cvc|exp)|cvv|cvc|credit|iban|ssn|security.?code|pin\b/i;
const SENSITIVE_AUTOCOMPLETE = /^(cc-|current-password|new-password|one-time-code)/i;

function isSensitiveField(el: Element): boolean {
  const input = el as HTMLInputElement;
  if (input.type === 'password') return true;
  const ac = el.getAttribute('autocomplete') ?? '';
  if (SENSITIVE_AUTOCOMPLETE.test(ac)) return true;
  for (const attr of ['name', 'id', 'aria-label', 'placeholder', 'data-testid']) {
    const v = el.getAttribute(attr);
    if (v && SENSITIVE_NAME.test(v)) return true;
  }
  // A digits-only value of card length in a field with no telling name is still a card number.
  const v = typeof input.value === 'string' ? input.value.replace(/[\s-]/g, '') : '';
  return /^\d{13,19}$/.test(v);
}

function fieldValue(el: Element): string | undefined {
  if (isSensitiveField(el)) return '[redacted]';
  const input = el as HTMLInputElement;
  if (input.type === 'checkbox' || input.type === 'radio') return String(input.checked);
  if (input.type === 'file') return `[${input.files?.length ?? 0} file(s)]`;
  if (typeof input.value === 'string') return input.value.slice(0, VALUE_MAX);
  if ((el as HTMLElement).isContentEditable) return '[contenteditable]';
  return undefined;
}

const INTERACTIVE = 'a,button,input,select,textarea,label,summary,[role],[data-testid],[onclick],[tabindex]';

function record(type: string, el: Element | null, extra: Record<string, Json> = {}): Record<string, Json> {
  const rec: Record<string, Json> = { ts: now(), type, url: location.href, ...extra };
  if (el) rec.selectors = selectorsFor(el);
  return rec;
}

function action(type: string, el: Element | null, extra: Record<string, Json> = {}): void {
  emit('actions', record(type, el, extra));
}

/**
 * A click on something clickable waits for its verdict (click-effect.ts), at most 1 s, and is
 * sent with it; its time and selectors are taken now, before the click changes the page.
 */
function click(e: MouseEvent): void {
  const target = e.target instanceof Element ? e.target : null;
  const el = target?.closest(INTERACTIVE) ?? target;
  const rec = record('click', el);
  if (!watchable(target, e)) return emit('actions', rec);
  watchClick((effect) => {
    if (effect) rec.effect = effect;
    emit('actions', rec);
    // the page is going away: the channel flushed on pagehide before this verdict
    if (effect === 'navigation') flush();
  });
}

let pendingInput: { el: Element; timer: ReturnType<typeof setTimeout> } | null = null;

function flushInput(): void {
  const p = pendingInput;
  if (!p) return;
  pendingInput = null;
  clearTimeout(p.timer);
  guard(() => {
    const value = fieldValue(p.el);
    action('input', p.el, value === undefined ? {} : { value });
  });
}

export function installActions(): void {
  const opts = { capture: true, passive: true } as const;
  installClickEffects();

  addEventListener(
    'click',
    (e) => {
      if (!cfg.on || agentDriven(e)) return;
      guard(() => click(e));
    },
    opts,
  );

  addEventListener(
    'input',
    (e) => {
      if (!cfg.on || agentDriven(e) || !(e.target instanceof Element)) return;
      const el = e.target;
      if (el.tagName === 'SELECT') return; // reported as `select` on change
      if (pendingInput && pendingInput.el !== el) flushInput();
      if (pendingInput) clearTimeout(pendingInput.timer);
      pendingInput = { el, timer: setTimeout(flushInput, INPUT_SETTLE_MS) };
    },
    opts,
  );
  addEventListener('focusout', () => flushInput(), opts);

  addEventListener(
    'change',
    (e) => {
      if (!cfg.on || agentDriven(e) || !(e.target instanceof HTMLSelectElement)) return;
      const sel = e.target;
      guard(() => {
        const opt = sel.selectedOptions[0];
        action('select', sel, { value: isSensitiveField(sel) ? '[redacted]' : (opt?.value ?? sel.value).slice(0, VALUE_MAX) });
      });
    },
    opts,
  );

  addEventListener(
    'keydown',
    (e) => {
      if (!cfg.on || agentDriven(e) || !NAV_KEYS.has(e.key)) return;
      guard(() => action('keypress', e.target instanceof Element ? e.target : null, { key: e.key }));
    },
    opts,
  );

  addEventListener(
    'submit',
    (e) => {
      if (!cfg.on || agentDriven(e)) return;
      flushInput();
      guard(() => action('submit', e.target instanceof Element ? e.target : null));
    },
    opts,
  );

  let scrollTimer: ReturnType<typeof setTimeout> | undefined;
  addEventListener(
    'scroll',
    () => {
      if (!cfg.on || scrollTimer !== undefined || agentWindow()) return;
      scrollTimer = setTimeout(() => {
        scrollTimer = undefined;
        guard(() => action('scroll', null, { scroll_y: Math.round(scrollY) }));
      }, SCROLL_THROTTLE_MS);
    },
    opts,
  );

  let lastUrl = location.href;
  const navigated = (): void => {
    const to = location.href;
    if (to === lastUrl) return;
    const from = lastUrl;
    lastUrl = to;
    settle('navigation');
    if (cfg.on) guard(() => action('navigate', null, { from_url: from, to_url: to }));
  };
  for (const m of ['pushState', 'replaceState'] as const) {
    const original = history[m];
    history[m] = function (this: History, ...args: Parameters<History['pushState']>): void {
      const r = original.apply(this, args);
      guard(navigated);
      return r;
    };
  }
  addEventListener('popstate', () => guard(navigated), opts);
  addEventListener('hashchange', () => guard(navigated), opts);
  addEventListener('pagehide', flushInput, opts);
}
