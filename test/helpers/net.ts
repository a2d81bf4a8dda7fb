import { createServer } from 'node:net';

/** A port on 127.0.0.1 that was free a moment ago (for spawned processes that need a fixed port). */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
