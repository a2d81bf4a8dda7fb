/** The ingest room's door: what a worker needs to turn bytes into ring records. */
export { decodeFrame, type DecodeResult } from '../wire/decode.js';
export type { BatchFrame, ClientFrame, HelloFrame } from '../wire/schemas.js';
export { processBatchFrame, processHttpBody, type IngestContext, type IngestOutput, type HttpIngestResult, type RecordError } from './process.js';
export { headerStripRedactor, type Redactor } from './redactor.js';
