/**
 * The wake alarm must never outlive a connection: a periodic alarm resets Chrome's idle timer, and
 * a connect that lands while `get` is out used to be followed by the `create` (the lifetime e2e's
 * control worker then lived forever). An in-memory alarm table with a `get` that answers late.
 */
import { describe, expect, it } from 'vitest';
import { WakeAlarm, type AlarmsLike } from '../../../extension/src/sw/wake-alarm.js';

function table(getDelayMs: number): AlarmsLike & { names: Set<string> } {
  const names = new Set<string>();
  return {
    names,
    get: (n) => new Promise((r) => setTimeout(() => r(names.has(n) ? { name: n } : undefined), getDelayMs)),
    create: (n) => void names.add(n),
    clear: async (n) => names.delete(n),
  };
}

describe('wake alarm', () => {
  it('a connect while the disconnected branch is still asking leaves no alarm', async () => {
    const alarms = table(20);
    const wake = new WakeAlarm(alarms, 'w');
    void wake.set(true); // connecting
    await wake.set(false); // connected before `get` answered
    expect([...alarms.names]).toEqual([]);
  });

  it('armed while disconnected, once, and cleared on connect', async () => {
    const alarms = table(1);
    const wake = new WakeAlarm(alarms, 'w');
    await wake.set(true);
    await wake.set(true);
    expect([...alarms.names]).toEqual(['w']);
    await wake.set(false);
    expect([...alarms.names]).toEqual([]);
    void wake.set(false);
    await wake.set(true); // lost again: the latest wish wins
    expect([...alarms.names]).toEqual(['w']);
  });

  it('a failing alarms call does not stop later wishes', async () => {
    const alarms = table(1);
    let fail = true;
    const flaky: AlarmsLike = { ...alarms, clear: async (n) => { if (fail) { fail = false; throw new Error('gone'); } return alarms.clear(n); } };
    const wake = new WakeAlarm(flaky, 'w');
    await wake.set(true);
    await wake.set(false);
    await wake.set(false);
    expect([...alarms.names]).toEqual([]);
  });
});
