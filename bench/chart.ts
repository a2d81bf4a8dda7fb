/**
 * bench/results/latency-vs-load.svg: accepted events/s (left axis) and p99 latency (right axis,
 * log) against offered load (log), one point per profile and saturate step of a run. Push
 * latency when the build streams; the ack latency is always drawn beside it, and the chart says
 * when push latency was not measured rather than drawing a line it does not have.
 */
export interface ChartPoint {
  profile: string;
  offered: number;
  accepted: number;
  push_p99_ms: number | null;
  push_p50_ms?: number | null;
  ack_p99_ms: number;
}

const W = 760;
const H = 420;
const M = { l: 78, r: 78, t: 48, b: 64 };
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const kfmt = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : n >= 1000 ? `${Math.round(n / 1000)}k` : String(n));

export function latencyVsLoadSvg(points: ChartPoint[], subtitle: string): string {
  const pts = [...points].filter((p) => p.offered > 0).sort((a, b) => a.offered - b.offered);
  const pw = W - M.l - M.r;
  const ph = H - M.t - M.b;
  const xMin = 1000;
  const xMax = Math.max(1e6, ...pts.map((p) => p.offered));
  const x = (v: number): number => M.l + ((Math.log10(Math.max(v, xMin)) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin))) * pw;
  const yMaxT = Math.max(400_000, ...pts.map((p) => p.accepted)) * 1.05;
  const yT = (v: number): number => M.t + ph - (v / yMaxT) * ph;
  const lats = pts.flatMap((p) => [p.ack_p99_ms, p.push_p99_ms ?? 0]).filter((v) => v > 0);
  const lMin = 0.1;
  const lMax = Math.max(10_000, ...lats);
  const yL = (v: number): number => M.t + ph - ((Math.log10(Math.max(v, lMin)) - Math.log10(lMin)) / (Math.log10(lMax) - Math.log10(lMin))) * ph;
  const o: string[] = [];
  o.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  o.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  o.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">Gasoline: throughput and p99 latency against offered load</text>`);
  o.push(`<text x="${W / 2}" y="36" text-anchor="middle" fill="#555">${esc(subtitle)}</text>`);
  // grid and axes
  for (let e = 3; e <= Math.ceil(Math.log10(xMax)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v < xMin || v > xMax) continue;
      o.push(`<line x1="${x(v)}" x2="${x(v)}" y1="${M.t}" y2="${M.t + ph}" stroke="#eee"/>`);
      o.push(`<text x="${x(v)}" y="${M.t + ph + 16}" text-anchor="middle">${kfmt(v)}</text>`);
    }
  }
  o.push(`<text x="${M.l + pw / 2}" y="${H - 22}" text-anchor="middle">offered load, events/s (log)</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = (yMaxT / 4) * i;
    o.push(`<text x="${M.l - 6}" y="${yT(v) + 4}" text-anchor="end" fill="#1f5fbf">${kfmt(Math.round(v / 1000) * 1000)}</text>`);
  }
  o.push(`<text transform="translate(18 ${M.t + ph / 2}) rotate(-90)" text-anchor="middle" fill="#1f5fbf">accepted events/s</text>`);
  for (let e = Math.ceil(Math.log10(lMin)); e <= Math.log10(lMax); e++) {
    const v = 10 ** e;
    o.push(`<line x1="${M.l}" x2="${M.l + pw}" y1="${yL(v)}" y2="${yL(v)}" stroke="#f3e3e3"/>`);
    o.push(`<text x="${M.l + pw + 6}" y="${yL(v) + 4}" fill="#b0302a">${v >= 1 ? v : v.toFixed(1)} ms</text>`);
  }
  o.push(`<text transform="translate(${W - 16} ${M.t + ph / 2}) rotate(90)" text-anchor="middle" fill="#b0302a">p99 latency, ms (log)</text>`);
  o.push(`<line x1="${M.l}" x2="${M.l}" y1="${M.t}" y2="${M.t + ph}" stroke="#333"/><line x1="${M.l + pw}" x2="${M.l + pw}" y1="${M.t}" y2="${M.t + ph}" stroke="#333"/><line x1="${M.l}" x2="${M.l + pw}" y1="${M.t + ph}" y2="${M.t + ph}" stroke="#333"/>`);
  // SLO lines: push p99 5 ms, saturation 300k
  o.push(`<line x1="${M.l}" x2="${M.l + pw}" y1="${yL(5)}" y2="${yL(5)}" stroke="#b0302a" stroke-dasharray="6 4"/><text x="${M.l + 4}" y="${yL(5) - 4}" fill="#b0302a">push SLO 5 ms</text>`);
  o.push(`<line x1="${M.l}" x2="${M.l + pw}" y1="${yT(300_000)}" y2="${yT(300_000)}" stroke="#1f5fbf" stroke-dasharray="2 4"/><text x="${M.l + 4}" y="${yT(300_000) - 4}" fill="#1f5fbf">saturation SLO 300k/s</text>`);
  const series = (get: (p: ChartPoint) => number | null, y: (v: number) => number, color: string, dash: string, shape: 'circle' | 'square'): void => {
    const ps = pts.filter((p) => get(p) !== null && get(p)! > 0);
    if (!ps.length) return;
    o.push(`<polyline fill="none" stroke="${color}" stroke-width="2" ${dash ? `stroke-dasharray="${dash}"` : ''} points="${ps.map((p) => `${x(p.offered).toFixed(1)},${y(get(p)!).toFixed(1)}`).join(' ')}"/>`);
    for (const p of ps) {
      const cx = x(p.offered).toFixed(1);
      const cy = y(get(p)!).toFixed(1);
      o.push(shape === 'circle' ? `<circle cx="${cx}" cy="${cy}" r="3.5" fill="${color}"><title>${esc(p.profile)}</title></circle>` : `<rect x="${Number(cx) - 3}" y="${Number(cy) - 3}" width="6" height="6" fill="${color}"><title>${esc(p.profile)}</title></rect>`);
    }
  };
  series((p) => p.accepted, yT, '#1f5fbf', '', 'circle');
  series((p) => p.ack_p99_ms, yL, '#e08a2c', '4 3', 'square');
  series((p) => p.push_p99_ms, yL, '#b0302a', '', 'circle');
  series((p) => p.push_p50_ms ?? null, yL, '#6b1a16', '2 3', 'circle');
  const hasPush = pts.some((p) => p.push_p99_ms !== null);
  const lx = M.l + 10;
  const ly = M.t + 14;
  o.push(`<rect x="${lx - 6}" y="${ly - 12}" width="330" height="${hasPush ? 74 : 72}" fill="#fff" fill-opacity="0.85" stroke="#ccc"/>`);
  o.push(`<circle cx="${lx + 4}" cy="${ly - 4}" r="3.5" fill="#1f5fbf"/><text x="${lx + 14}" y="${ly}">accepted events/s</text>`);
  o.push(`<rect x="${lx + 1}" y="${ly + 11}" width="6" height="6" fill="#e08a2c"/><text x="${lx + 14}" y="${ly + 18}">ack p99 (batch sent → acknowledged)</text>`);
  o.push(
    hasPush
      ? `<circle cx="${lx + 4}" cy="${ly + 32}" r="3.5" fill="#b0302a"/><text x="${lx + 14}" y="${ly + 36}">push p99 (5xx sent → notification read; 2 s = missed)</text><circle cx="${lx + 4}" cy="${ly + 50}" r="3.5" fill="#6b1a16"/><text x="${lx + 14}" y="${ly + 54}">push p50</text>`
      : `<text x="${lx}" y="${ly + 36}" fill="#b0302a">push p99: not measured — this build has no</text><text x="${lx}" y="${ly + 52}" fill="#b0302a">streaming (issue 5); no line is drawn for it</text>`,
  );
  o.push('</svg>');
  return `${o.join('\n')}\n`;
}
