/**
 * Fault injection for the chaos tests (config faultInjection; never in production): a batch whose
 * page_url names a fault triggers it. The core gets these as an injected part, so it holds no
 * process exit of its own; the worker passes how its thread ends.
 *   gasoline:crash       every such batch ends the worker before it commits
 *   gasoline:crash-once  the first such batch across all workers does (a shared flag word)
 *   gasoline:nack-once   each such batch is refused as overloaded once
 */
import type { BatchFrame } from '../wire/schemas.js';
import type { IngestFaults } from './core.js';
import type { SessionId } from './item.js';

export function pageUrlFaults(chaos: Int32Array, exit: (code: number) => never): IngestFaults {
  const nackedOnce = new Set<string>();
  return {
    nack(session: SessionId, frame: BatchFrame): boolean {
      if (frame.page_url !== 'gasoline:nack-once') return false;
      const key = `${session}:${frame.seq}`;
      if (nackedOnce.has(key)) return false;
      nackedOnce.add(key);
      return true;
    },
    beforeApply(frame: BatchFrame): void {
      // 70: EX_SOFTWARE, what a crashing worker would exit with
      if (frame.page_url === 'gasoline:crash') exit(70);
      if (frame.page_url === 'gasoline:crash-once' && Atomics.compareExchange(chaos, 0, 0, 1) === 0) exit(70);
    },
  };
}
