/**
 * The change a dry run shows: the lines around what differs, `-` removed and `+` added. Our
 * change is one entry in one place, so trimming the common head and tail finds it exactly; a
 * general diff algorithm would buy nothing here.
 */
const CONTEXT = 3;

export function lineDiff(before: string, after: string): string {
  const a = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const b = after.replace(/\n$/, '').split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const from = Math.max(0, head - CONTEXT);
  const out: string[] = [];
  if (from > 0) out.push(`@@ line ${from + 1} @@`);
  for (let i = from; i < head; i++) out.push(`  ${a[i]}`);
  for (let i = head; i < a.length - tail; i++) out.push(`- ${a[i]}`);
  for (let i = head; i < b.length - tail; i++) out.push(`+ ${b[i]}`);
  for (let i = a.length - tail; i < Math.min(a.length, a.length - tail + CONTEXT); i++) out.push(`  ${a[i]}`);
  return out.join('\n');
}
