/**
 * Calls that read and then move one client's cursors run one after another. Scans yield to the
 * event loop between slices, so without this two concurrent observe calls from one agent could
 * both read the same unread range and show it twice.
 */
const tails = new WeakMap<object, Promise<unknown>>();

export function oneAtATime<T>(owner: object, fn: () => Promise<T>): Promise<T> {
  const prev = tails.get(owner) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  // the chain must not keep a rejection around for the next caller
  tails.set(owner, run.catch(() => undefined));
  return run;
}
