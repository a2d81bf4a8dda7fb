/**
 * Imported FIRST by the panel entry (panel.ts): the MCP SDK builds its zod schemas when its
 * modules load, and zod, unless told jitless, probes `new Function` then to decide whether it may
 * compile fast parsers. The panel page's CSP forbids eval, so the probe fails quietly but Chrome
 * still files a CSP violation report on every panel load. Jitless skips the probe; the panel
 * parses a handful of small MCP messages, so the compiled fast path buys nothing.
 */
import { config } from 'zod/v4/core';

config({ jitless: true });
