/**
 * The shm room's door: shared-memory rings (one per telemetry kind) and counters.
 * Workers write with StoreWriter; the main thread reads with StoreReader.
 */
export { DROP_REASONS, BASE_COUNTERS, HEADER_BYTES, MAIN_HOLDER, REC_CLASSIFIED, REC_ERROR, REC_FAILING, REC_MSGPACK, framedSize, storeSizes, type DropReason, type StoreSizes } from './layout.js';
export { allocateStore, type StoreBuffers } from './store.js';
export { StoreWriter, type StagedCommit, type StagedRecord, type CommitOutcome, type StoreWriterOptions } from './writer.js';
export {
  StoreReader,
  StoreCorruptError,
  type ReadOptions,
  type ReadResult,
  type RecordHeader,
  type RecordView,
  type RingStats,
  type StoredRecord,
} from './reader.js';
export { sumDropped, type KindCounters } from './counters.js';
export { StoreLockTimeoutError } from './lock.js';
// the detectors' shared memory (domain/alerts reads and updates it through this door)
export { hash32, PERF_METRICS, DetectState, allocateDetectState } from './detect-state.js';
