/**
 * Cookie headers: the values go, the names and attributes (Secure, HttpOnly, SameSite, Expires…)
 * stay for security analysis. Shared by the engine and the always-safe header strip of ingest.
 */

/**
 * Where one Set-Cookie ends and the next begins: a newline, or a comma followed by `name=`
 * (how fetch and some proxies join several Set-Cookie headers). The comma inside
 * `Expires=Wed, 21 Oct 2037 …` is followed by a date, not by `name=`, so it does not split.
 */
const NEXT_SET_COOKIE = /\n|,(?=[ \t]{0,8}[^=;,\s]{1,256}=)/g;

/** Every cookie of a (possibly comma- or newline-joined) Set-Cookie value: its own value redacted. */
export function redactSetCookie(v: string): string {
  let out = '';
  let at = 0;
  NEXT_SET_COOKIE.lastIndex = 0;
  for (;;) {
    const m = NEXT_SET_COOKIE.exec(v);
    const end = m ? m.index : v.length;
    out += v.slice(at, end).replace(/^(\s*[^=;,\s]+)=[^;]*/, '$1=[REDACTED:cookie]');
    if (!m) return out;
    out += m[0];
    at = end + 1;
  }
}

/** `Cookie: a=1; sid=…`: every pair's value. */
export function redactCookie(v: string): string {
  return v.replace(/(^|;\s*)([^=;\s]+)=[^;]*/g, '$1$2=[REDACTED:cookie]');
}
