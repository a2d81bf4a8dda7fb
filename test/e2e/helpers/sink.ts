/**
 * Where the extension's data lands in a test: the real ingest server, in-process
 * (`startApp` through test/helpers/server.ts), read straight from its rings.
 */
import { isVerbatim, readStoredRecord } from '../../../src/domain/wire/stored-record.js';
import { kindId } from '../../../src/domain/kinds.js';
// imported with the test file, not inside a hook: the state-dir helper it loads registers the
// afterAll that removes the server's state dir, which a module first loaded by beforeAll could not
import { startTestServer } from '../../helpers/server.js';

export type Rec = Record<string, unknown>;

export interface Sink {
  readonly port: number;
  readonly kind: 'server';
  records(kind: string): Rec[];
  /** how many of a kind's stored records are the extension's own msgpack bytes (kept as they came), not JSON */
  verbatim(kind: string): number;
  /** distinct extension sessions seen so far (one per service-worker lifetime) */
  health(): Rec;
  close(): Promise<void>;
  /** refuse producers and drop the connected ones, keeping the store (an outage without a port rebind) */
  outage?(): void;
  recover?(): void;
}

function decodeOne(x: unknown): Rec | null {
  // a ring payload: JSON, or the extension's own msgpack map kept as it came
  if (x instanceof Uint8Array) return readStoredRecord(x) as Rec;
  if (typeof x === 'string') return JSON.parse(x) as Rec;
  if (x && typeof x === 'object') {
    const o = x as Rec;
    if (o.payload !== undefined) return decodeOne(o.payload);
    if (o.bytes !== undefined) return decodeOne(o.bytes);
    if (o.json !== undefined) return decodeOne(o.json);
    return o;
  }
  return null;
}

export async function startSink(port = 0): Promise<Sink> {
  const server = await startTestServer({ port });
  return {
    port: server.port,
    kind: 'server',
    records(kind) {
      const raw = server.reader.read(kindId(kind as never), 0, 1000) as unknown;
      const list = Array.isArray(raw) ? raw : ((raw as { records?: unknown[] }).records ?? []);
      return list.map(decodeOne).filter((r): r is Rec => r !== null);
    },
    verbatim(kind) {
      return server.reader.read(kindId(kind as never), 0, 1000).records.filter((r) => isVerbatim(r.payload)).length;
    },
    health: () => server.health(),
    close: () => server.close(),
    outage: () => {
      server.ws.stopAccepting();
      server.ws.closeAll('shutting_down');
    },
    recover: () => server.ws.resumeAccepting(),
  };
}

/** ids of the extension connections the server holds right now */
export function producerIds(sink: Sink): number[] {
  const ext = sink.health().extension as { producers?: Array<{ id: number }> } | undefined;
  return (ext?.producers ?? []).map((p) => p.id);
}
