/**
 * Which URLs a source map may be fetched from. A stack is page text: any page can name any URL in
 * one, so fetching what a stack names would let a page make the daemon send requests on its behalf
 * (SSRF). Only the page's own origin is asked, and only when that origin is this machine or a
 * private network's — the developer's own dev server. Names other than `localhost` are refused
 * rather than resolved: a DNS answer can change between the check and the connection (rebinding),
 * an IP literal cannot. Redirects are refused where the fetch is made (load.ts).
 */

export type Refusal = 'not_http' | 'not_private' | 'other_origin';

/** The WHATWG parser has already normalized the host (0x7f.1 → 127.0.0.1, [0:0::1] → [::1]). */
export function privateHost(hostname: string): boolean {
  if (hostname === 'localhost') return true;
  if (hostname === '[::1]') return true;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(hostname);
  if (!m) return false;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}

function parse(u: string): URL | undefined {
  try {
    return new URL(u);
  } catch {
    return undefined;
  }
}

/**
 * Undefined when `target` may be fetched for a page at `pageUrl`: http(s), on a private host, and
 * on the page's own origin when the page is known. A map named by a script is checked against the
 * script's URL the same way.
 */
export function refusal(target: string, pageUrl: string | undefined): Refusal | undefined {
  const t = parse(target);
  if (!t || (t.protocol !== 'http:' && t.protocol !== 'https:')) return 'not_http';
  if (!privateHost(t.hostname)) return 'not_private';
  if (pageUrl !== undefined) {
    const p = parse(pageUrl);
    if (!p || p.origin !== t.origin) return 'other_origin';
  }
  return undefined;
}
