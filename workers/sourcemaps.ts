/**
 * The source-map worker: fetches and parses the page's source maps and resolves positions, so a
 * map of megabytes is parsed here and never on the main thread that writes MCP. Started by the
 * first error worth resolving (src/sourcemaps/resolver.ts); wiring only.
 */
import './stdout-guard.js';
import { parentPort, workerData } from 'node:worker_threads';
import { MapStore } from '../src/sourcemaps/map-store.js';
import type { SourceMapReply, SourceMapRequest, SourceMapWorkerInit } from '../src/sourcemaps/messages.js';

const store = new MapStore(workerData as SourceMapWorkerInit);
const port = parentPort!;

port.on('message', (m: SourceMapRequest) => {
  if (m.t === 'clear') return store.clear();
  store.resolve(m.frames, m.page).then(
    (answers) => port.postMessage({ t: 'resolved', id: m.id, answers, stats: store.stats() } satisfies SourceMapReply),
    // resolve() turns every failure into a miss; this is a bug's last resort, answered as misses
    () => port.postMessage({ t: 'resolved', id: m.id, answers: [], stats: store.stats() } satisfies SourceMapReply),
  );
});
