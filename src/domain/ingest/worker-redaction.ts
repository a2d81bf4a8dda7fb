/**
 * A worker's redactor and what it reports: main may change the rules (a new version travels with
 * the next task), and each task reports the secrets redacted since the last one, per class, so main
 * adds them up across workers without asking.
 */
import type { Redactor } from './redactor.js';
import type { RedactionSource } from './core.js';

export interface RuleSet {
  rules: Array<{ name: string; pattern: string; replacement?: string | undefined }>;
  allowlist: string[];
}

type CountingRedactor = Redactor & { counts(): Record<string, number> };

export class WorkerRedaction implements RedactionSource {
  private redactor: CountingRedactor;
  private version = 0;
  // keyed by rule names the user chooses ("constructor" is a valid one): no prototype to collide with
  private reported: Record<string, number> = Object.create(null) as Record<string, number>;

  /** Fail closed: a rule set that does not compile throws here and the pool never starts. */
  constructor(
    private readonly compile: (rules: RuleSet) => CountingRedactor,
    initial: RuleSet,
  ) {
    this.redactor = compile(initial);
  }

  current(): CountingRedactor {
    return this.redactor;
  }

  /** The rule set a task says is in force; main validated it before bumping the version. */
  update(next: ({ version: number } & RuleSet) | undefined): void {
    if (!next || next.version === this.version) return;
    this.redactor = this.compile({ rules: next.rules, allowlist: next.allowlist });
    this.version = next.version;
    this.reported = Object.create(null) as Record<string, number>;
  }

  /** Redactions per class since the last call; undefined when there were none. */
  delta(): Record<string, number> | undefined {
    const now = this.redactor.counts();
    let delta: Record<string, number> | undefined;
    for (const [cls, n] of Object.entries(now)) {
      const d = n - (this.reported[cls] ?? 0);
      if (d > 0) (delta ??= Object.create(null) as Record<string, number>)[cls] = d;
    }
    if (delta) this.reported = Object.assign(Object.create(null) as Record<string, number>, now);
    return delta;
  }

  /** Synthetic traffic (warm-up) redacted things that are not the user's: forget them. */
  forget(): void {
    this.reported = { ...this.redactor.counts() };
  }
}
