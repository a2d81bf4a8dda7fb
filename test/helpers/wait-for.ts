/**
 * The one way tests wait for something to happen: poll until `fn` returns a truthy value, or fail
 * after a bounded deadline naming what never came. A fixed sleep either wastes time or flakes on a
 * loaded machine; a poll costs only as long as the thing takes.
 *
 * To prove something did NOT happen, do not wait here: use fake timers where the clock is ours
 * (vi.useFakeTimers), or wait for a later thing that must come after it (a marker, an ack).
 */
export type Falsy = undefined | null | false | 0 | '';

/** `what` may be a function, to name the state at the moment of failure (a counters snapshot). */
export async function waitFor<T>(what: string | (() => string), fn: () => T | Falsy | Promise<T | Falsy>, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
