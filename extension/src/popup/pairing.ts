/**
 * The popup's pairing block: whether we are paired, why a server gets no telemetry, the code field,
 * the trust-on-first-use confirmation and "Forget pairing". Kept apart from the rest of the popup.
 */
import type { PopupStatus } from '../shared/settings.js';
import type { ToWorker } from '../shared/protocol.js';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

const WHY: Record<string, string> = {
  unpaired: 'Not paired: this extension sends nothing until you pair it.',
  no_proof: 'Not sending: the server on this port proved no pairing (not gasoline, or too old).',
  impostor: 'Not sending: the server on this port is NOT the gasoline we are paired with.',
};

export function renderPairing(s: PopupStatus): void {
  const st = s.transport.state;
  const p = s.pairing;
  let text: string;
  if (st.kind === 'refused') text = `${WHY[st.why] ?? st.why} ${st.reason}`;
  else if (st.kind === 'connected') text = p.preset ? 'Paired (preset), and the server proved it.' : `Paired${p.paired_at ? ` since ${p.paired_at.slice(0, 16).replace('T', ' ')}` : ''}; the server proved it.`;
  else text = p.paired ? 'Paired; waiting for the server to prove it.' : 'Not paired.';
  $('pair-state').textContent = text;
  $('pair-state').className = `hint ${st.kind === 'refused' && st.why !== 'unpaired' ? 'error' : st.kind === 'connected' ? 'ok' : ''}`;
  $('pair-tofu').hidden = !(st.kind === 'refused' && st.why === 'unpaired' && st.tofu);
  $<HTMLButtonElement>('pair-go').disabled = p.busy;
  $<HTMLButtonElement>('pair-accept').disabled = p.busy;
  $<HTMLButtonElement>('pair-forget').disabled = !p.paired || p.preset;
  const r = $('pair-result');
  r.textContent = p.busy ? 'pairing…' : (p.last?.message ?? '');
  r.className = `hint ${p.last && !p.busy ? (p.last.ok ? 'ok' : 'error') : ''}`;
}

export function wirePairing(ask: (m: ToWorker) => Promise<PopupStatus>, render: (s: PopupStatus) => void): void {
  $<HTMLFormElement>('pair-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const code = $<HTMLInputElement>('pair-code').value.trim();
    if (!code) return;
    $('pair-result').textContent = 'pairing…';
    void ask({ t: 'pair', code }).then(render);
  });
  $('pair-accept').addEventListener('click', () => {
    $('pair-result').textContent = 'pairing…';
    void ask({ t: 'pair', code: null }).then(render);
  });
  $('pair-forget').addEventListener('click', () => void ask({ t: 'forget_pairing' }).then(render));
}
