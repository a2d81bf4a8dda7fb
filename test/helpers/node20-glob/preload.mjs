/**
 * `node --import ./preload.mjs <cli>`: lets a CLI written for Node ≥ 22 that imports
 * `globSync` from `fs` run on Node 20 (the project's runtime), where that export does not exist.
 *
 * Setting `fs.globSync` here would not help: the ESM facade of a builtin fixes its export names
 * the first time anything imports it, and `import { globSync } from 'fs'` fails at link time
 * before any code of the CLI runs. So a resolve hook points `fs` at a module that re-exports
 * all of `node:fs` plus a real `globSync` (./fs-with-glob.mjs). On a Node that has `globSync`
 * this does nothing.
 */
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') register('./hooks.mjs', import.meta.url);
