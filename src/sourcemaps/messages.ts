/** The whole main ↔ source-map worker protocol (workers/sourcemaps.ts). */
import type { FrameAnswer, MapStoreLimits, MapStoreStats } from './map-store.js';
import type { Frame } from './stack.js';

export type SourceMapRequest = { t: 'resolve'; id: number; page?: string; frames: Frame[] } | { t: 'clear' };

export type SourceMapReply = { t: 'resolved'; id: number; answers: FrameAnswer[]; stats: MapStoreStats };

export type SourceMapWorkerInit = MapStoreLimits;
