/**
 * User patterns run on attacker-controlled page text. Refuse what can backtrack
 * catastrophically before accepting it: nested or adjacent unbounded quantifiers,
 * backreferences, and anything that is slow on an adversarial trial run.
 */
export function unsafeUserPattern(p: string, maxLength = 500): string | null {
  if (p.length > maxLength) return `longer than ${maxLength} characters`;
  let re: RegExp;
  try {
    re = new RegExp(p, 'g');
  } catch (e) {
    return `invalid pattern: ${(e as Error).message}`;
  }
  const plain = p.replace(/\\./g, 'x');
  if (/\\[1-9]|\\k</.test(p)) return 'backreferences are not allowed';
  if (/\((?:[^()]|\([^()]*\))*[+*}](?:[^()]|\([^()]*\))*\)\s*(?:[+*]|\{\d*,\d*\})/.test(plain)) return 'a quantified group containing a quantifier can backtrack catastrophically (e.g. (a+)+)';
  if (/\((?:[^()|]*\|)+[^()]*\)\s*[+*]/.test(plain) && /\(([^()|]+)\|\1\)/.test(plain)) return 'overlapping alternatives under a quantifier can backtrack catastrophically';
  if (/[+*]\)?[+*]/.test(plain)) return 'adjacent quantifiers can backtrack catastrophically';
  // trial on near-misses: a pattern that takes long here would stall ingest on hostile pages
  const probes = ['a'.repeat(5000) + '!', '0'.repeat(5000) + '!', 'a1'.repeat(2500) + '!', ' '.repeat(5000) + '!'];
  for (const s of probes) {
    const t0 = performance.now();
    re.lastIndex = 0;
    re.test(s);
    if (performance.now() - t0 > 50) return 'too slow on adversarial input (> 50 ms on 5 000 characters)';
  }
  return null;
}
