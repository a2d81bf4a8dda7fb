/**
 * Imported first by every worker entry. Piscina does not let us set the Worker `stdout` option,
 * so a worker's process.stdout would be piped into the parent's stdout — which belongs to MCP.
 * Anything a worker (or a library in it) prints goes to stderr instead.
 */
import { format } from 'node:util';

const toStderr = (...args: unknown[]): void => {
  process.stderr.write(`gasoline worker ${format(...args)}\n`);
};
console.log = toStderr;
console.info = toStderr;
console.debug = toStderr;
console.table = toStderr;
console.dir = toStderr;
process.stdout.write = ((chunk: unknown, ...rest: unknown[]): boolean =>
  (process.stderr.write as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest)) as typeof process.stdout.write;
