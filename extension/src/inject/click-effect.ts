/**
 * What a click changed (issue 20 item 3, dead clicks). Only the page sees its own DOM, so the
 * verdict is made here: a click on something meant to be clicked is watched for up to 1 s, and
 * its record carries the first effect seen — "dom" (a mutation), "request" (fetch or XHR started),
 * "navigation" (history, hash, unload, another window took focus) — or "none": a dead click.
 *
 * The observer runs only while a click is pending (from the press to the verdict), so a page pays
 * nothing between clicks. A watch the page blocked (a dialog, a long task) cannot be judged: its
 * record goes without a verdict rather than with a false "none".
 */
import { AGENT_MARK } from '../shared/protocol.js';
import { guard } from './util.js';

export type ClickEffect = 'dom' | 'request' | 'navigation' | 'none';

export const DEAD_CLICK_MS = 1000;
/** a timer this late means the page was blocked: no verdict */
const LATE_MS = 500;
/** clicks awaiting a verdict; past this a click is sent at once without one */
const MAX_WATCHED = 20;

/** Things a user clicks expecting something to happen. Form fields change state without the DOM. */
const CLICKABLE = 'a[href],button,[role="button"],[role="link"],[role="menuitem"],[role="tab"],summary,input[type="button"],input[type="submit"],input[type="reset"],input[type="image"],[onclick]';

interface Watch {
  done: (effect: ClickEffect | undefined) => void;
  timer: ReturnType<typeof setTimeout>;
}

const watching = new Set<Watch>();
let observer: MutationObserver | null = null;
/** the DOM changed since the last press (a menu that opens on mousedown is the click's effect) */
let changedSincePress = false;
let pressAt = Number.NEGATIVE_INFINITY;

// taken at document_start, before page scripts could replace them
const perfNow = performance.now.bind(performance);

function onMutations(records: MutationRecord[]): void {
  // the worker marks the page while the agent drives it: our own attribute is no effect of the user's
  if (records.every((r) => r.type === 'attributes' && r.attributeName === AGENT_MARK)) return;
  changedSincePress = true;
  settle('dom');
}

function observe(): void {
  if (observer) return;
  guard(() => {
    observer = new MutationObserver(onMutations);
    observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  });
}

function idle(): void {
  if (watching.size > 0 || perfNow() - pressAt < DEAD_CLICK_MS) return;
  observer?.disconnect();
  observer = null;
}

/** Every pending click gets `effect` as its verdict. */
export function settle(effect: Exclude<ClickEffect, 'none'>): void {
  if (watching.size === 0) return;
  const all = [...watching];
  watching.clear();
  for (const w of all) {
    clearTimeout(w.timer);
    guard(() => w.done(effect));
  }
  idle();
}

/** A press starts the watch: what changes between it and the click belongs to the click. */
function onPress(): void {
  pressAt = perfNow();
  changedSincePress = false;
  observe();
  setTimeout(idle, DEAD_CLICK_MS + 50);
}

/** Whether this click is one to judge: its target is clickable and it opens nothing elsewhere. */
export function watchable(el: Element | null, e: MouseEvent): boolean {
  if (!el || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return false;
  const target = el.closest(CLICKABLE);
  if (!target) return false;
  if (target instanceof HTMLAnchorElement && (target.target === '_blank' || target.hasAttribute('download'))) return false;
  return true;
}

/**
 * Watches one click; `done` gets its verdict (undefined: none could be made) exactly once, at the
 * first effect or after DEAD_CLICK_MS.
 */
export function watchClick(done: (effect: ClickEffect | undefined) => void): void {
  if (watching.size >= MAX_WATCHED) return done(undefined);
  // a change since the press (mousedown handlers run before the click)
  if (changedSincePress && perfNow() - pressAt < DEAD_CLICK_MS) return done('dom');
  observe();
  if (observer) {
    // mutations made before this click and not yet delivered are the earlier clicks' effects
    const before = observer.takeRecords();
    if (before.length > 0) onMutations(before);
  }
  const started = perfNow();
  const w: Watch = {
    done,
    timer: setTimeout(() => {
      watching.delete(w);
      const late = perfNow() - started > DEAD_CLICK_MS + LATE_MS;
      guard(() => done(late ? undefined : 'none'));
      idle();
    }, DEAD_CLICK_MS),
  };
  watching.add(w);
}

export function installClickEffects(): void {
  const opts = { capture: true, passive: true } as const;
  addEventListener('pointerdown', () => guard(onPress), opts);
  addEventListener('hashchange', () => settle('navigation'), opts);
  addEventListener('popstate', () => settle('navigation'), opts);
  addEventListener('beforeunload', () => settle('navigation'), opts);
  addEventListener('pagehide', () => settle('navigation'), opts);
  // a popup or a new tab took the focus: the click did something, elsewhere
  addEventListener('blur', (e) => e.target === window && settle('navigation'), opts);
}
