/**
 * The detectors' per-record helpers as they were before issue 17's detection pass (7a4b5eb), kept
 * as oracles: the faster forms must give the same value for every input, because the values are
 * stored (a log's `_sig`, which observe folds by) and shown (a noise alert's dedup key).
 */

export function signatureHashBefore(msg: string, seed = 0x811c9dc5): number {
  const isDigit = (c: number): boolean => c >= 48 && c <= 57;
  const isAlnum = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  const isHex = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
  const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13);
  const mix = (h: number, c: number): number => Math.imul(h ^ c, 0x01000193);
  let h = seed;
  const n = Math.min(msg.length, 500);
  let i = 0;
  let lastSpace = true;
  while (i < n) {
    const c = msg.charCodeAt(i);
    if (c === 34 || c === 39) {
      const end = msg.indexOf(c === 34 ? '"' : "'", i + 1);
      if (end > i && end - i <= 201 && msg.lastIndexOf('\n', end) < i) {
        h = mix(mix(h, c), 0x51);
        i = end + 1;
        lastSpace = false;
        continue;
      }
    }
    if (isAlnum(c)) {
      let j = i;
      let digits = false;
      let hex = true;
      while (j < n && isAlnum(msg.charCodeAt(j))) {
        const d = msg.charCodeAt(j);
        if (isDigit(d)) digits = true;
        if (!isHex(d)) hex = false;
        j++;
      }
      if (!digits) for (let k = i; k < j; k++) h = mix(h, msg.charCodeAt(k));
      else if (hex) h = mix(h, 0x48);
      else {
        let inRun = false;
        for (let k = i; k < j; k++) {
          const d = msg.charCodeAt(k);
          if (isDigit(d)) {
            if (!inRun) h = mix(h, 0x23);
            inRun = true;
          } else {
            h = mix(h, d);
            inRun = false;
          }
        }
      }
      i = j;
      lastSpace = false;
      continue;
    }
    if (isSpace(c)) {
      if (!lastSpace) h = mix(h, 32);
      lastSpace = true;
      i++;
      continue;
    }
    h = mix(h, c);
    lastSpace = false;
    i++;
  }
  return h === 0 ? 1 : h | 0;
}

export function digitFoldedHashBefore(s: string): number {
  let h = 0x811c9dc5;
  let inDigits = false;
  const n = Math.min(s.length, 300);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (inDigits) continue;
      inDigits = true;
      h ^= 35;
    } else {
      inDigits = false;
      h ^= c;
    }
    h = Math.imul(h, 0x01000193);
  }
  return h === 0 ? 1 : h | 0;
}

export function topFrameBefore(stack: string | undefined): string {
  if (!stack) return '';
  for (const line of stack.split('\n').slice(1, 8)) {
    const m = /\(?((?:https?|file|chrome-extension):\/\/[^\s)]+?):(\d+)(?::\d+)?\)?\s*$/.exec(line.trim());
    if (m && !m[1]!.startsWith('chrome-extension://')) return `${m[1]!.replace(/\?.*$/, '')}:${m[2]}`;
  }
  return '';
}

export function hash32Before(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h === 0 ? 1 : h | 0;
}

/** The noise count as a Map of {start, count}, bounded at `max` keys by emptying it. */
export class NoiseMapBefore {
  private readonly m = new Map<number, { start: number; count: number }>();
  constructor(
    private readonly max: number,
    private readonly windowS: number,
  ) {}

  add(key: number, sec: number): number {
    const e = this.m.get(key);
    if (e && sec - e.start < this.windowS) return ++e.count;
    if (!e && this.m.size >= this.max) this.m.clear();
    this.m.set(key, { start: sec, count: 1 });
    return 1;
  }
}

/** A seeded generator (mulberry32), so a failure names the input it failed on. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
