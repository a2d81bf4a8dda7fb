/**
 * Which tabs are captured. Other tabs are private: their records are dropped in the page.
 *   - config.json trackAll (tests): every tab.
 *   - the user chose tabs in the popup: exactly those.
 *   - otherwise: the active tab of the last focused window.
 * Tab ids do not survive a browser restart, so choices live in chrome.storage.session, which
 * also survives the worker being stopped.
 */

interface State {
  active: number | null;
  /** tabId → explicit choice from the popup */
  choices: Record<string, boolean>;
}

const KEY = 'gasoline.tracking';

export class Tracking {
  private state: State = { active: null, choices: {} };
  trackAll = false;

  async load(): Promise<void> {
    const got = await chrome.storage.session.get(KEY);
    const s = got[KEY] as State | undefined;
    if (s) this.state = s;
    if (this.state.active === null) {
      const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
      if (tab?.id !== undefined) this.state.active = tab.id;
    }
  }

  private save(): void {
    void chrome.storage.session.set({ [KEY]: this.state });
  }

  get mode(): 'all' | 'active' | 'chosen' {
    if (this.trackAll) return 'all';
    return Object.values(this.state.choices).some(Boolean) ? 'chosen' : 'active';
  }

  chosenCount(): number {
    return Object.values(this.state.choices).filter(Boolean).length;
  }

  isTracked(tabId: number | undefined): boolean {
    if (tabId === undefined || tabId < 0) return false;
    if (this.trackAll) return true;
    const c = this.state.choices[tabId];
    if (c !== undefined) return c;
    return this.mode === 'active' && tabId === this.state.active;
  }

  reason(tabId: number): string {
    if (this.trackAll) return 'all tabs are tracked (config.json)';
    const c = this.state.choices[tabId];
    if (c === true) return 'you chose to track this tab';
    if (c === false) return 'you turned tracking off for this tab';
    if (this.mode === 'chosen') return 'only the tabs you chose are tracked';
    return tabId === this.state.active ? 'following the active tab' : 'not the active tab';
  }

  /** @returns whether anything changed */
  setActive(tabId: number): boolean {
    if (this.state.active === tabId) return false;
    this.state.active = tabId;
    this.save();
    return true;
  }

  choose(tabId: number, on: boolean): void {
    this.state.choices[tabId] = on;
    // Turning the last chosen tab off returns to following the active tab.
    if (!on && this.mode === 'active') delete this.state.choices[tabId];
    this.save();
  }

  forget(tabId: number): void {
    delete this.state.choices[tabId];
    if (this.state.active === tabId) this.state.active = null;
    this.save();
  }
}
