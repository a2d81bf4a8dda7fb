/**
 * The read engine: bounded scans over the shared rings, filters, folding, cursors. The scan
 * worker runs its folded reads, the MCP tools call it and render what it returns. It imports
 * the store (shm/) and the domain rules, never mcp/, clients/, pool/ or transport/: whoever asks
 * passes what it needs (noise rules, checkpoint ordinals) as plain data.
 */
export { decode, scan, type Hit, type Rec, type ScanResult, type ScanSpec } from './scan.js';
export { lastMatching, type LastSpec } from './last-matching.js';
export { bindReadRules, compiledReadRules, readRulesOf, redactRead } from './read-rules.js';
export { DEADLINE_MS, MIN_SCAN, SLICE_MS, ScanBudget, scanSliced } from './sliced-scan.js';
export { ERROR_BYTES, isError, isFailing, matcher, prefilter, type FilterArgs } from './filter.js';
export { bySeverityThenNewest, Folder, MAX_GROUPS, type Group } from './fold.js';
export { foldKey, severity, type Severity } from './fold-key.js';
export { IDLE_MS, IS_ERROR, IS_FAILING, MAX_INDEX_ENTRIES, MatchIndex, ReadIndexes, TICK_MS } from './match-index.js';
export { packFold, unpackFold, type PackedFold } from './fold-wire.js';
export { MAX_GROUPS_LIMIT, MAX_WALL_MS, runFoldQuery, type FoldAnswer, type FoldQuery, type KindResult } from './fold-query.js';
export { emptyFold } from './empty-fold.js';
export { BUILTIN_NOISE, compileNoise, hider, MAX_NOISE_PATTERN, noiseField, type NoiseField, type NoiseSpec, type NoiseTest } from './noise.js';
export { badCursor, decodeCursor, encodeAt, encodeRest, type Cursor } from './cursor.js';
export { errorKeysBefore, latestCheckpoint, type CheckpointMark } from './checkpoint-keys.js';
export { loadsSince, PERF_MAX_SCAN, perfByUrl, perfByUrlSliced, type Load, type Timing } from './perf.js';
export { abnormalClose, MAX_CONNS, wsConnections, wsErrorsSince, wsTroubleSince, type WsConnection, type WsTrouble } from './websocket.js';
export { lastPage, type LastPage } from './page.js';
export { hitsBefore, type BackSpec } from './page-back.js';
export { errorContext, findErrors, type ErrorsSpec, type FoundErrors } from './error-bundles.js';
export { failingEndpoints } from './failing.js';
export { compileTabPattern, headerOnly, inScope, MAX_TAB_PATTERN, pageUrlOf, type TabScope } from './tab-scope.js';
export { recentTabPages } from './tab-pages.js';
export { DOCUMENT_HEADERS, securityFindings, securityReport, type CookieSeen, type DocumentHeaders, type FindingSeverity, type SecurityFinding, type SecurityReport } from './security.js';
export { buildHar, type HarCaps, type HarDropped, type HarFile, type HarOptions } from './har.js';
export { readHarRecords, type HarReadSpec, type HarRecords } from './har-read.js';
