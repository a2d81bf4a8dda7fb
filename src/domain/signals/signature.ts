/**
 * Normalized signatures: the same problem with different numbers, ids, hashes, timestamps or
 * quoted values gets one signature, so errors can be clustered and "new since" compared.
 */
const RULES: Array<[RegExp, string]> = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b/g, '<time>'],
  [/\b[0-9a-f]{12,}\b/gi, '<hash>'],
  [/"[^"\n]{0,200}"/g, '"<s>"'],
  [/'[^'\n]{0,200}'/g, "'<s>'"],
  [/\d+(\.\d+)?/g, '<n>'],
];

export function normalizeMessage(msg: string): string {
  let s = msg.length > 500 ? msg.slice(0, 500) : msg;
  for (const [re, rep] of RULES) s = s.replace(re, rep);
  return s.replace(/\s+/g, ' ').trim();
}

const FRAME = /\(?((?:https?|file|chrome-extension):\/\/[^\s)]+?):(\d+)(?::\d+)?\)?\s*$/;

/**
 * The first stack frame that is not our own wrapper, as "file:line": the first of lines 2–8 that
 * ends in a URL with a line number. Only a line holding "://" can, so the others are not split
 * out or matched (the workers ask this of every error they ingest).
 */
export function topFrame(stack: string | undefined): string {
  if (!stack) return '';
  let nl = stack.indexOf('\n');
  let url = nl < 0 ? -1 : stack.indexOf('://', nl);
  for (let line = 1; line < 8 && nl >= 0 && url >= 0; line++) {
    const start = nl + 1;
    nl = stack.indexOf('\n', start);
    const end = nl < 0 ? stack.length : nl;
    if (url >= end) continue;
    const m = FRAME.exec(stack.slice(start, end).trim());
    if (m && !m[1]!.startsWith('chrome-extension://')) return `${m[1]!.replace(/\?.*$/, '')}:${m[2]}`;
    if (nl >= 0) url = stack.indexOf('://', nl);
  }
  return '';
}

export function errorSignature(rec: { message?: unknown; stack?: unknown; type?: unknown; method?: unknown; request_url?: unknown; status?: unknown }): string {
  if (rec.type === 'network') return `${String(rec.method ?? 'GET')} ${pathTemplate(String(rec.request_url ?? ''))} → ${String(rec.status ?? 'failed')}`;
  const top = topFrame(typeof rec.stack === 'string' ? rec.stack : undefined);
  return `${normalizeMessage(String(rec.message ?? ''))}${top ? ` @ ${top}` : ''}`;
}

/** "https://api.x/users/42/items?id=7" → "api.x/users/<n>/items" */
export function pathTemplate(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname.replace(/\/\d+(?=\/|$)/g, '/<n>').replace(/\/[0-9a-f]{12,}(?=\/|$)/gi, '/<hash>').replace(/\/[0-9a-f-]{36}(?=\/|$)/gi, '/<uuid>')}`;
  } catch {
    return url.replace(/\?.*$/, '');
  }
}
