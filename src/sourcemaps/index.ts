/**
 * Source-mapped stacks (issue 21 item 4): a page's generated frames resolved to the original file,
 * line, column and source line, with the page's own source maps. The door of the room: main holds
 * a `SourceMaps` (resolver.ts); the maps are fetched and parsed in workers/sourcemaps.ts.
 */
export { SourceMaps, type OriginalFrame, type ResolvedStack, type SourceMapsOptions, type StackResolver } from './resolver.js';
export type { Resolved } from './map-store.js';
export { recordFrames, shortFrame, type Frame, type FrameFields } from './stack.js';
