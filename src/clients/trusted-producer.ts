/**
 * The one place that says whose approval decisions count (issue 19 item 4). A decision must come
 * from the user's own extension, never from any process that said hello on the port: such a
 * process could approve whatever an agent asks.
 *
 * Commands (and so approval requests) go only to a producer that connected with the extension's
 * Origin and proved the pairing secret in its hello (src/transport/ws.ts `commandRoute`); this
 * checks the same proof again where a decision is taken, so a path that forgets the route's check
 * still cannot be approved by an unpaired process.
 */
import type { ProducerRef } from './commands.js';

export function isTrustedProducer(p: ProducerRef): boolean {
  return p.client === 'extension' && p.verified === true;
}
