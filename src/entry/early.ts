/**
 * What bin/gasoline needs before it knows what it is: the options that tell a bridge from the
 * rest, and a standalone's early answer to `initialize` (src/mcp/early-stdio.ts). `pnpm build`
 * bundles this file and what it imports into one CommonJS file, dist/src/entry/early.cjs
 * (scripts/bundle-entry.mjs), which bin/gasoline requires: a CommonJS entry starts without
 * Node's ES module loader, and one file is one read instead of six module loads. Measured:
 * spawn → first initialize answered ~8 ms sooner at the median (PERFORMANCE.md "Cold start").
 *
 * It must stay small and pure: the bundle holds its own copy of every module it imports, so
 * nothing here may keep state that the rest of the program shares (a log level, a registry).
 */
export { bridgeOptions, isStandalone } from '../bridge/options.js';
export { earlyStdio } from '../mcp/early-stdio.js';
export { threadIds } from '../pool/thread-ids.js';
