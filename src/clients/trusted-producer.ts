/**
 * The one place that says whose approval decisions count (issue 19 item 4). A decision must come
 * from the user's own extension, never from any process that said hello on the port: such a
 * process could approve whatever an agent asks.
 *
 * Today commands (and so approval requests) go only to a producer that connected with the
 * extension's Origin (src/transport/ws.ts `commandRoute`), and that is all this can check. Pairing
 * (issue 19 item 1) adds a proof to the hello and a `verified` flag on the producer record; once it
 * lands this must require it: `return p.client === 'extension' && p.verified === true;`.
 */
import type { ProducerRef } from './commands.js';

export function isTrustedProducer(p: ProducerRef & { readonly verified?: boolean }): boolean {
  return p.client === 'extension';
}
