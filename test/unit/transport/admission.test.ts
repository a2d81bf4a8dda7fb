import { describe, expect, it } from 'vitest';
import { admit, type SlotHolder, type Trust } from '../../../src/transport/admission.js';

const limits = { max_connections: 6, max_unauthenticated: 4, max_unauthenticated_per_peer: 3 };
let n = 0;
const h = (peer: string, trust: Trust = 'none', authenticated = false): SlotHolder & { n: number } => ({ n: ++n, peer, trust, authenticated });

describe('admit (#18 item 4)', () => {
  it('admits freely under every cap', () => {
    expect(admit([h('a'), h('b')], { peer: 'a', trust: 'none' }, limits)).toEqual({ admit: true, shed: [] });
  });

  it('sheds the oldest unauthenticated of the same peer past the per-peer cap', () => {
    const hs = [h('b'), h('a'), h('a'), h('a')];
    expect(admit(hs, { peer: 'a', trust: 'none' }, limits)).toEqual({ admit: true, shed: [hs[1]] });
  });

  it('sheds the oldest unauthenticated overall past the total cap', () => {
    const hs = [h('a', 'extension_origin', true), h('b'), h('c'), h('d'), h('e')];
    expect(admit(hs, { peer: 'f', trust: 'none' }, limits)).toEqual({ admit: true, shed: [hs[1]] });
  });

  it('lets our Origin in when every slot is full, shedding unverified before our own pending ones', () => {
    const hs = [h('x', 'extension_origin'), h('x', 'extension_origin', true), h('b'), h('c'), h('d'), h('e')];
    expect(admit(hs, { peer: 'x', trust: 'extension_origin' }, limits)).toEqual({ admit: true, shed: [hs[2]] });
  });

  it('never sheds an authenticated producer, and an unverified newcomer never displaces our Origin', () => {
    const full = Array.from({ length: 6 }, () => h('x', 'extension_origin', true));
    expect(admit(full, { peer: 'x', trust: 'extension_origin' }, limits)).toEqual({ admit: false });
    const pending = Array.from({ length: 6 }, () => h('x', 'extension_origin'));
    expect(admit(pending, { peer: 'y', trust: 'none' }, limits)).toEqual({ admit: false });
    expect(admit(pending, { peer: 'x', trust: 'extension_origin' }, limits)).toEqual({ admit: true, shed: [pending[0]] });
  });
});
