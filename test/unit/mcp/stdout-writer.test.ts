import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StdoutWriter } from '../../../src/mcp/stdout-writer.js';

/** A real Writable whose consumer is slow: write() returns false until we drain it. */
function slowSink(highWaterMark = 64): { stream: Writable; lines: string[]; release: () => void } {
  const lines: string[] = [];
  const pending: Array<() => void> = [];
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      pending.push(cb);
    },
  });
  return { stream, lines, release: () => { for (const cb of pending.splice(0)) cb(); } };
}

describe('StdoutWriter', () => {
  it('writes whole lines in order and waits for drain when write() says false', async () => {
    const sink = slowSink();
    const w = new StdoutWriter(sink.stream);
    const a = w.write({ jsonrpc: '2.0', id: 1, result: 'x'.repeat(100) }, 'response');
    const b = w.write({ jsonrpc: '2.0', id: 2, result: {} }, 'response');
    await a;
    expect(sink.lines).toHaveLength(1); // the second waits for 'drain'
    sink.release();
    await b;
    sink.release();
    expect(sink.lines.map((l) => JSON.parse(l).id)).toEqual([1, 2]);
    expect(sink.lines.every((l) => l.endsWith('\n') && l.indexOf('\n') === l.length - 1)).toBe(true);
  });

  it('under pressure drops notifications (counted) and never delays a response behind them', async () => {
    const sink = slowSink();
    const w = new StdoutWriter(sink.stream, 200);
    void w.write({ jsonrpc: '2.0', id: 1, result: 'y'.repeat(100) }, 'response'); // fills the pipe
    for (let i = 0; i < 50; i++) void w.write({ jsonrpc: '2.0', method: 'notifications/message', params: { i } }, 'notification');
    const resp = w.write({ jsonrpc: '2.0', id: 2, result: {} }, 'response');
    expect(w.stats.notifications_dropped).toBe(50);
    for (let i = 0; i < 5 && sink.lines.length < 2; i++) {
      sink.release();
      await new Promise((r) => setImmediate(r));
    }
    await resp;
    expect(JSON.parse(sink.lines[1]!).id).toBe(2);
  });

  it('reports a broken pipe once and swallows later writes', async () => {
    const stream = new Writable({ write: (_c, _e, cb) => cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })) });
    const w = new StdoutWriter(stream);
    let broken = 0;
    w.onBrokenPipe(() => broken++);
    await w.write({ jsonrpc: '2.0', id: 1, result: {} }, 'response');
    await new Promise((r) => setImmediate(r));
    await w.write({ jsonrpc: '2.0', id: 2, result: {} }, 'response');
    expect(broken).toBe(1);
    expect(w.stats.broken).toBe(true);
  });
});
