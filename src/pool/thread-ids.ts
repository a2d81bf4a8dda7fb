/**
 * This process's thread ids as the kernel numbers them (Linux: /proc/self/task), or undefined
 * elsewhere. bin/gasoline reads them first thing (src/entry/early.ts), before anything asynchronous
 * starts libuv's pool: the list is then Node's and V8's own threads and main (helper-threads.ts).
 */
import { readdirSync } from 'node:fs';

export function threadIds(): number[] | undefined {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return undefined;
  }
}
