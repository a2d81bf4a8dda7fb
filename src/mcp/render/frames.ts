/**
 * Source-mapped frames in answers (issue 21 item 4): the original position first, with the
 * original source line when the map carries it, and the generated position after it, compactly
 * (`app.min.js:1:2345`), so nothing the stack said is lost. File names and source lines come from
 * the page's maps: page text, quoted like every other (page-text.ts), redacted at egress with the
 * rest of the answer. A frame without a map is shown as before.
 */
import type { Rec } from '../../query/index.js';
import { shortFrame, type OriginalFrame, type ResolvedStack } from '../../sourcemaps/index.js';
import { pageText as q } from './page-text.js';

/** A record's resolved stack, from what is already resolved (never waits). */
export type FrameLookup = (rec: Rec) => ResolvedStack | undefined;

/** frames after the top one that error_bundles lists */
const MORE_FRAMES = 5;

function at(f: OriginalFrame): string {
  const to = f.to!;
  return q(`${to.file}:${to.line}:${to.column}`, 220);
}

/** ` at "src/cart.ts:42:7" code="throw new Error('empty')" gen="app.min.js:1:2345"`: the record's top frame. */
export function topFrameText(s: ResolvedStack): string {
  const f = s.frames[s.top]!;
  return ` at ${at(f)}${f.to!.code ? ` code=${q(f.to!.code, 160)}` : ''} gen=${q(shortFrame(f.frame), 120)}`;
}

/**
 * The rest of the stack on one line, original positions where the map gave one, generated
 * otherwise: `stack: "src/a.ts:3:1" ← async "src/b.ts:9:2" ← "vendor.js:1:99"`. Undefined when
 * there is nothing past the top frame.
 */
export function moreFrames(s: ResolvedStack): string | undefined {
  const rest = s.frames.filter((_, i) => i !== s.top);
  if (!rest.length) return undefined;
  const shown = rest.slice(0, MORE_FRAMES).map((f) => `${f.frame.async ? 'async ' : ''}${f.frame.eval ? 'eval at ' : ''}${f.to ? at(f) : q(shortFrame(f.frame), 120)}`);
  const more = rest.length > MORE_FRAMES ? ` (+${rest.length - MORE_FRAMES} frames)` : '';
  return `stack: ${shown.join(' ← ')}${more}`;
}
