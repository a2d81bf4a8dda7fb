/**
 * Finds the top-level "id" of a JSON-RPC line too long to parse, as its bytes stream past, in
 * O(1) memory. A refusal must carry the request's id or the client waits for ever (#18 item 7),
 * and the SDK client writes the id LAST (`{...request, jsonrpc, id}`), after the huge params, so
 * a bounded look at the head is not enough. Only depth-1 keys count: an "id" inside the
 * arguments (configure's noise rule id) is not the request's.
 */

import { BACKSLASH, CLOSE_ARR, CLOSE_OBJ, COLON, COMMA, OPEN_ARR, OPEN_OBJ, QUOTE } from '../domain/wire/json-bytes.js';

/** an id longer than this is not one a client would wait on */
const MAX_ID_BYTES = 256;

const I = 0x69;
const D = 0x64;

export class RequestIdScanner {
  /** bytes fed so far */
  bytes = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** at depth 1 and the next string is a key */
  private expectKey = false;
  /** length of the depth-1 key being read, -1 when none; its first two bytes */
  private keyLen = -1;
  private key0 = 0;
  private key1 = 0;
  /** the last depth-1 key was exactly "id" and its ':' has not come yet */
  private idKey = false;
  /** bytes of the id's value while it is being read */
  private value: number[] | null = null;
  private found: string | number | null = null;

  /** The request's id, once its value has been read whole; null when absent or not a string/number. */
  get id(): string | number | null {
    return this.found;
  }

  feed(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    // Once found, the rest is discarded unread: a second top-level "id" would make the line
    // invalid anyway, and the first one is what a client that sent it is waiting on.
    if (this.found !== null) return;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.value && this.depth === 1 && !this.inString && (b === COMMA || b === CLOSE_OBJ)) {
        this.finishValue();
        if (this.found !== null) return;
      }
      if (this.value) {
        if (this.value.length >= MAX_ID_BYTES) this.value = null;
        else this.value.push(b);
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === BACKSLASH) this.escaped = true;
        else if (b === QUOTE) {
          this.inString = false;
          if (this.keyLen >= 0) {
            this.idKey = this.keyLen === 2 && this.key0 === I && this.key1 === D;
            this.keyLen = -1;
          }
        } else if (this.keyLen >= 0) {
          if (this.keyLen === 0) this.key0 = b;
          else if (this.keyLen === 1) this.key1 = b;
          this.keyLen++;
        }
        continue;
      }
      switch (b) {
        case QUOTE:
          this.inString = true;
          if (this.depth === 1 && this.expectKey) {
            this.expectKey = false;
            this.keyLen = 0;
          }
          break;
        case OPEN_OBJ:
        case OPEN_ARR:
          this.depth++;
          if (this.depth === 1) this.expectKey = b === OPEN_OBJ;
          break;
        case CLOSE_OBJ:
        case CLOSE_ARR:
          this.depth--;
          break;
        case COMMA:
          if (this.depth === 1) this.expectKey = true;
          break;
        case COLON:
          if (this.depth === 1 && this.idKey) {
            this.idKey = false;
            this.value = [];
          }
          break;
      }
    }
  }

  private finishValue(): void {
    const raw = Buffer.from(this.value!).toString('utf8');
    this.value = null;
    try {
      const v: unknown = JSON.parse(raw);
      if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) this.found = v;
    } catch {
      // not a JSON value: no id to answer with
    }
  }
}
