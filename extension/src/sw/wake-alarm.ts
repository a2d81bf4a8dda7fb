/**
 * The alarm that wakes a stopped worker to retry while disconnected. It must not outlive the
 * connection: a periodic alarm resets Chrome's idle timer, so a stray one keeps an idle worker
 * alive for good. `chrome.alarms` calls are asynchronous, and a connect that lands between
 * `get` and `create` would clear first and create after; so every change waits for the previous
 * one and applies only the latest wish.
 */
export interface AlarmsLike {
  get(name: string): Promise<unknown>;
  create(name: string, info: { periodInMinutes: number }): Promise<void> | void;
  clear(name: string): Promise<boolean>;
}

export class WakeAlarm {
  private wanted = false;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly alarms: AlarmsLike,
    private readonly name: string,
    private readonly periodInMinutes = 0.5,
  ) {}

  /** armed while disconnected, cleared while connected; returns when this wish is applied */
  set(armed: boolean): Promise<void> {
    this.wanted = armed;
    this.chain = this.chain.then(() => this.apply()).catch(() => undefined);
    return this.chain;
  }

  private async apply(): Promise<void> {
    if (!this.wanted) {
      await this.alarms.clear(this.name);
      return;
    }
    const existing = await this.alarms.get(this.name);
    // a connect may have come while `get` was out: the latest wish decides
    if (!existing && this.wanted) await this.alarms.create(this.name, { periodInMinutes: this.periodInMinutes });
  }
}
