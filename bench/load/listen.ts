/**
 * How the bench's own servers (reference-server.ts, ceiling-server.ts) take their port: loopback,
 * a clear exit (3) when it is taken, the "listening" line on stderr that server-proc.ts waits for,
 * and a clean exit on SIGTERM / SIGINT (server-proc.ts stops them with SIGTERM).
 */
import type { TemplatedApp } from '../../src/transport/uws.js';
import { uws } from '../../src/transport/uws.js';

export function listenOrExit(app: TemplatedApp, name: string, port: number, detail = ''): void {
  app.listen('127.0.0.1', port, (s) => {
    if (!s) {
      process.stderr.write(`${name}: port ${port} on 127.0.0.1 is taken\n`);
      process.exit(3);
    }
    process.stderr.write(`${name} listening on 127.0.0.1:${port}${detail}\n`);
    const stop = (): void => {
      uws.us_listen_socket_close(s);
      process.exit(0);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
