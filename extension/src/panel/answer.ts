/**
 * Reading a triage answer (contract B): the text, and its footer line
 * `redaction: policy <version> · redacted <n> · blocked <n> · model <adapter>`, which the panel
 * shows as a badge rather than as prose. Also the bounds on what the panel keeps of any tool
 * text. Pure, tested in Node.
 */

export interface RedactionBadge {
  policy: string;
  redacted: number;
  blocked: number;
  model: string | null;
}

export interface ReadAnswer {
  /** the answer without its footer line */
  body: string;
  redaction: RedactionBadge | null;
  /** the model egress was refused (model_egress_blocked): the badge turns into a warning */
  egressBlocked: boolean;
}

const FOOTER = /^redaction: policy (\S{1,64}) · redacted (\d{1,9}) · blocked (\d{1,9})(?: · model (\S{1,64}))?\s*$/;

/** a whole answer is kept up to this many characters; the rest is cut with a note (every hop bounded) */
export const MAX_TEXT = 20_000;

export function bound(text: string, max = MAX_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters not shown)`;
}

export function readAnswer(text: string): ReadAnswer {
  const lines = text.split('\n');
  let redaction: RedactionBadge | null = null;
  // the footer is the last non-empty line; looked for only there, so an answer quoting one is not misread
  let last = lines.length - 1;
  while (last >= 0 && lines[last]!.trim() === '') last--;
  const m = last >= 0 ? FOOTER.exec(lines[last]!.trim()) : null;
  if (m) {
    redaction = { policy: m[1]!, redacted: Number(m[2]), blocked: Number(m[3]), model: m[4] ?? null };
    lines.splice(last, 1);
  }
  const body = bound(lines.join('\n').trimEnd());
  return { body, redaction, egressBlocked: /\bmodel_egress_blocked\b/.test(text) };
}

export function badgeText(b: RedactionBadge): string {
  return `redaction: policy ${b.policy} · redacted ${b.redacted} · blocked ${b.blocked}${b.model ? ` · model ${b.model}` : ''}`;
}

/** The first lines of a tool's text for an evidence card: the summary a card shows before "more". */
export function headLines(text: string, n: number): { head: string; more: number } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return { head: lines.slice(0, n).join('\n'), more: Math.max(0, lines.length - n) };
}
