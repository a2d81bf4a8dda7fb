/**
 * The ingest stages after a body or frame is read, timed one by one on the product's functions
 * (process.ts exports them) over a real store and detector: validate, redact, normalize, detect,
 * encode for one kind's array, then the commit. The pipeline and http_body micros both time them,
 * each after its own read (a msgpack frame, a JSON body).
 */
import { Detector } from '../../src/domain/alerts/detect.js';
import { emptyOutput, encodeRecords, notVerbatim, redactRecords, resetStaging, validateRecords, type IngestContext, type IngestOutput } from '../../src/domain/ingest/process.js';
import { KINDS, kindId, type Kind } from '../../src/domain/kinds.js';
import { compileRedaction } from '../../src/domain/redaction/index.js';
import { normalizeRecord } from '../../src/domain/wire/normalize.js';
import { RecordSpans } from '../../src/domain/wire/record-spans.js';
import type { IngestedRecord } from '../../src/domain/wire/schemas.js';
import { allocateDetectState, allocateStore, DetectState, StoreWriter } from '../../src/shm/index.js';

export type RecordStage = 'validate' | 'redact' | 'normalize' | 'detect' | 'encode' | 'commit';

export interface StageRig {
  readonly ctx: IngestContext;
  readonly spans: RecordSpans;
  /** a fresh output for the next body or frame (and the staging of verbatim records reset) */
  begin(): IngestOutput;
  /** validate … encode for one kind's array, a lap after each */
  kind(kind: Kind, arr: unknown[], pageUrl: string | undefined, tab: number, out: IngestOutput, lap: (s: RecordStage) => void): void;
  /** the commit into the store (and the detector's alerts taken), a lap after it; the records stored */
  commit(out: IngestOutput, lap: (s: RecordStage) => void): number;
}

export function stageRig(): StageRig {
  const writer = new StoreWriter(allocateStore(KINDS.map(() => 8 << 20)), 1);
  const detector = new Detector(new DetectState(allocateDetectState()));
  const ctx: IngestContext = { recvTime: Date.now(), redactor: compileRedaction(), limits: { max_events_per_batch: 1000, max_errors_per_ack: 20 } };
  const spans = new RecordSpans();
  return {
    ctx,
    spans,
    begin() {
      resetStaging();
      return emptyOutput();
    },
    kind(kind, arr, pageUrl, tab, out, lap) {
      const recs = validateRecords(kind, arr, pageUrl, ctx, out, spans);
      lap('validate');
      redactRecords(kind, recs, ctx, out);
      lap('redact');
      for (let j = 0; j < recs.length; j++) if (normalizeRecord(kind, recs[j]!)) notVerbatim(j);
      lap('normalize');
      for (const r of recs) detector.see({ kind, rec: r } as IngestedRecord, 0, pageUrl);
      lap('detect');
      encodeRecords(kindId(kind), recs, tab, out.records, spans);
      lap('encode');
    },
    commit(out, lap) {
      writer.commit({ recvTime: ctx.recvTime, records: out.records, received: out.received, rejected: out.rejected });
      detector.take();
      lap('commit');
      return out.records.length;
    },
  };
}
