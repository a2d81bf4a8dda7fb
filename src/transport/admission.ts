/**
 * Who gets a connection slot when they are scarce (issue #18 item 4). Any local process can open
 * sockets and say hello, so slots are not first come, first served: connections that are not an
 * authenticated producer are capped in total and per peer address, and when a cap is reached the
 * OLDEST of them is shed to make room. A flood therefore churns its own sockets, and a producer
 * that carries our extension's Origin is let in as long as anything unauthenticated can be shed.
 * Pure decisions over a snapshot; the WebSocket edge does the closing.
 */

/**
 * What the upgrade request proved. An Origin header proves nothing to a local process (any
 * process can send one); it keeps web pages and other extensions out. Pairing (a later issue)
 * adds a proof; until then `extension_origin` plus a hello is what "authenticated" means.
 */
export type Trust = 'extension_origin' | 'none';

export interface SlotHolder {
  readonly peer: string;
  readonly trust: Trust;
  /** an authenticated producer: never shed */
  readonly authenticated: boolean;
}

export interface SlotLimits {
  max_connections: number;
  max_unauthenticated: number;
  max_unauthenticated_per_peer: number;
}

export type Admission<T> = { admit: true; shed: T[] } | { admit: false };

/**
 * `holders` in age order, oldest first. Shed first the oldest connection without any claim
 * (`trust: none`), then the oldest that carries our Origin but has not said hello yet.
 */
export function admit<T extends SlotHolder>(holders: readonly T[], newcomer: { peer: string; trust: Trust }, limits: SlotLimits): Admission<T> {
  const shed: T[] = [];
  const sheddable = (h: T): boolean => !h.authenticated && !shed.includes(h);
  if (newcomer.trust === 'none') {
    let total = 0;
    let fromPeer = 0;
    for (const h of holders) {
      if (h.authenticated || h.trust !== 'none') continue;
      total++;
      if (h.peer === newcomer.peer) fromPeer++;
    }
    if (fromPeer >= limits.max_unauthenticated_per_peer) {
      const oldest = holders.find((h) => sheddable(h) && h.trust === 'none' && h.peer === newcomer.peer);
      if (oldest) {
        shed.push(oldest);
        total--;
      }
    }
    if (total >= limits.max_unauthenticated) {
      const oldest = holders.find((h) => sheddable(h) && h.trust === 'none');
      if (oldest) shed.push(oldest);
    }
  }
  if (holders.length - shed.length >= limits.max_connections) {
    // An unauthenticated newcomer never displaces a connection that carries our Origin.
    const oldest = holders.find((h) => sheddable(h) && h.trust === 'none') ?? (newcomer.trust === 'none' ? undefined : holders.find(sheddable));
    if (!oldest) return { admit: false };
    shed.push(oldest);
  }
  return { admit: true, shed };
}
