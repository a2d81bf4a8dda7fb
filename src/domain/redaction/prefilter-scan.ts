/**
 * The pre-filter's candidate finder (prefilter.wat) in this thread: one instance per thread,
 * made on first use. V8's indexOf finds each anchor character memchr-fast, but a call per
 * occurrence and thirteen passes over a batch's text were most of the pre-filter's cost; the
 * WebAssembly pass reads each sixteen bytes once and lists every position any pass would have
 * stopped at (issue 17). It decides nothing: trigger.ts confirms each position with the passes'
 * own functions.
 */
import { B64, TEXT_LEAD } from './base64-chars.js';
import { PREFILTER_WASM } from './prefilter-wasm.js';

/** where the text starts in the module's memory (below it, the run tables: see the .wat) */
const TEXT_AT = 1024;
/** zero bytes after the text: the last chunk and its one-byte look-ahead read only these */
const PAD = 32;
const PAGE = 65536;
/**
 * Longer texts go through the passes instead: the memory a thread keeps for this (text plus its
 * worst case of candidates) stays under ~10 MB, and a batch's text is bounded by the frame anyway.
 */
export const SCAN_MAX = 1 << 20;

export const KIND_ANCHOR = 0;
/** in the low four bits of the kind word; the run's length above them */
export const KIND_BASE64_RUN = 1;
export const KIND_CARD_RUN = 2;

/** the finder's list: `count` pairs (kind, position) in `words` from index `at` */
export interface Candidates {
  count: number;
  words: Int32Array;
  at: number;
}

/** the part of the WebAssembly API used here (the TypeScript config has no DOM library) */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

interface Scanner {
  mem: WasmMemory;
  scan: (len: number, out: number) => number;
  bytes: Buffer;
  words: Int32Array;
  /** the memory's size as last seen (reading mem.buffer is a call into the runtime) */
  size: number;
}

let scanner: Scanner | null | undefined;

function instantiate(): Scanner | null {
  if (!wasm) return null;
  try {
    const inst = new wasm.Instance(new wasm.Module(Buffer.from(PREFILTER_WASM, 'base64')), {});
    const mem = inst.exports.mem as WasmMemory;
    // the run tables the module reads (see the .wat's memory layout)
    new Uint8Array(mem.buffer).set(B64, 0);
    new Uint8Array(mem.buffer).set(TEXT_LEAD, 256);
    return { mem, scan: inst.exports.scan as Scanner['scan'], bytes: Buffer.from(mem.buffer), words: new Int32Array(mem.buffer), size: mem.buffer.byteLength };
  } catch {
    // no WebAssembly SIMD here: the passes answer alone, as they did before
    return null;
  }
}

/**
 * The candidates found in `text`, or null when this thread cannot scan it (then the passes do).
 * The list lives in the module's memory until the next scan: read it before anything that may
 * scan again (the rules do, on a decoded run).
 */
export function scanCandidates(text: string): Candidates | null {
  const len = text.length;
  if (len > SCAN_MAX) return null;
  if (scanner === undefined) scanner = instantiate();
  const s = scanner;
  if (s === null) return null;
  const out = (TEXT_AT + len + PAD + 7) & ~7;
  // at most 16 anchors and one run of each kind per chunk of 16, and the last chunk's overrun
  const need = out + 8 * (len + 2 * (len >> 4) + 40);
  if (need > s.size) {
    s.mem.grow(Math.ceil((need - s.size) / PAGE));
    s.bytes = Buffer.from(s.mem.buffer);
    s.words = new Int32Array(s.mem.buffer);
    s.size = s.mem.buffer.byteLength;
  }
  // one byte per character: the caller passes only texts without characters above U+00FF
  s.bytes.write(text, TEXT_AT, len, 'latin1');
  s.bytes.fill(0, TEXT_AT + len, TEXT_AT + len + PAD);
  return { count: s.scan(len, out), words: s.words, at: out >> 2 };
}
