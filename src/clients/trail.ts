/**
 * A client's trail: <state_dir>/clients/<id>.jsonl, one line per tool call (when, which tool, its
 * arguments after egress redaction and cut to a bound, the answer's size, how long, the error
 * code), so a developer can see what an agent asked and what it cost. The file is 0600 like
 * everything under the state dir and rotates at a size (one older file kept), so it stays bounded.
 *
 * Writes never block the MCP loop: lines are buffered and appended asynchronously, one write in
 * flight at a time; the buffer is bounded too (a disk slower than the calls loses lines, counted).
 * A write that fails is logged once and that trail stops — never a crash, never a retry storm.
 */
import { chmod, mkdir, open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { CLIENT_ID_RE } from '../daemon/contract.js';
import { log } from '../log.js';
import { DIR_MODE, FILE_MODE } from '../state-dir.js';

export interface TrailEntry {
  tool: string;
  /** already redacted by the caller (the rule set in force) */
  args: unknown;
  resultChars: number;
  ms: number;
  code?: string;
}

export interface TrailOptions {
  /** rotate when the file would pass this size (1 MiB: thousands of calls) */
  maxBytes?: number;
  /** arguments longer than this (as JSON) are kept as a cut string */
  maxArgChars?: number;
  /** lines waiting for the disk beyond this are dropped and counted */
  maxPendingBytes?: number;
  now?: () => number;
}

const DEFAULTS = { maxBytes: 1024 * 1024, maxArgChars: 2000, maxPendingBytes: 256 * 1024 };

export class ClientTrail {
  readonly path: string;
  /** lines lost to a full buffer or a failed write */
  dropped = 0;
  private pending: string[] = [];
  private pendingBytes = 0;
  private handle: FileHandle | undefined;
  private size = 0;
  private writing: Promise<void> | undefined;
  private disabled = false;
  private readonly o: Required<Omit<TrailOptions, 'now'>> & { now: () => number };

  constructor(
    private readonly dir: string,
    readonly clientId: string,
    opts: TrailOptions = {},
  ) {
    if (!CLIENT_ID_RE.test(clientId)) throw new Error(`client id ${JSON.stringify(clientId)} cannot name a trail file`);
    this.path = join(dir, `${clientId}.jsonl`);
    this.o = { ...DEFAULTS, now: Date.now, ...opts };
  }

  append(e: TrailEntry): void {
    if (this.disabled) return;
    const line = `${JSON.stringify(this.line(e))}\n`;
    if (this.pendingBytes + line.length > this.o.maxPendingBytes) {
      this.dropped++;
      return;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    this.writing ??= this.drain();
  }

  /** Resolves once every line appended so far is on disk (or dropped). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
    this.disabled = true;
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
  }

  private line(e: TrailEntry): Record<string, unknown> {
    let args: unknown = e.args;
    const json = JSON.stringify(args) ?? 'null';
    // cut as text: a half object is no object, and the bound matters more than the shape
    if (json.length > this.o.maxArgChars) args = `${json.slice(0, this.o.maxArgChars)}…(${json.length} chars)`;
    return { ts: new Date(this.o.now()).toISOString(), tool: e.tool, args, result_chars: e.resultChars, ms: Math.round(e.ms * 100) / 100, ...(e.code ? { error: e.code } : {}) };
  }

  private async drain(): Promise<void> {
    let inFlight = 0;
    try {
      while (this.pending.length && !this.disabled) {
        const chunk = this.pending.join('');
        inFlight = this.pending.length;
        this.pending = [];
        this.pendingBytes = 0;
        const h = await this.file(Buffer.byteLength(chunk));
        await h.write(chunk);
        this.size += Buffer.byteLength(chunk);
      }
    } catch (e) {
      this.disabled = true;
      this.dropped += inFlight + this.pending.length;
      this.pending = [];
      this.pendingBytes = 0;
      log.warn('client trail write failed; the trail is off for this client', { client: this.clientId, error: (e as Error).message });
      await this.handle?.close().catch(() => undefined);
      this.handle = undefined;
    } finally {
      this.writing = undefined;
    }
  }

  /** The open file, rotated first when `next` bytes would pass the bound. */
  private async file(next: number): Promise<FileHandle> {
    if (!this.handle) await this.openFile();
    if (this.size > 0 && this.size + next > this.o.maxBytes) {
      await this.handle!.close();
      this.handle = undefined;
      // one older file kept: the rename replaces the previous .1
      await rename(this.path, `${this.path}.1`);
      await this.openFile();
    }
    return this.handle!;
  }

  private async openFile(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: DIR_MODE });
    await chmod(this.dir, DIR_MODE);
    // 'a' creates with the umask applied and keeps an existing file's mode: chmod says ours
    const h = await open(this.path, 'a', FILE_MODE);
    try {
      await h.chmod(FILE_MODE);
      this.size = (await h.stat()).size;
    } catch (e) {
      await h.close().catch(() => undefined);
      throw e;
    }
    this.handle = h;
  }
}

/** open trails (a file handle each); past it the least recently used one is closed */
const MAX_OPEN = 64;

/** One trail per client id, made on its first call; closed (flushed) with the app. */
export class TrailBook {
  private readonly trails = new Map<string, ClientTrail>();
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly opts: TrailOptions = {},
  ) {}

  append(clientId: string, e: TrailEntry): void {
    if (this.closed || !CLIENT_ID_RE.test(clientId)) return;
    let t = this.trails.get(clientId);
    if (t) this.trails.delete(clientId);
    else {
      t = new ClientTrail(this.dir, clientId, this.opts);
      if (this.trails.size >= MAX_OPEN) {
        const [oldest, trail] = this.trails.entries().next().value!;
        this.trails.delete(oldest);
        void trail.close();
      }
    }
    // re-inserted: the Map's order is the use order
    this.trails.set(clientId, t);
    t.append(e);
  }

  get(clientId: string): ClientTrail | undefined {
    return this.trails.get(clientId);
  }

  async flush(): Promise<void> {
    await Promise.all([...this.trails.values()].map((t) => t.flush()));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.trails.values()].map((t) => t.close()));
    this.trails.clear();
  }
}
