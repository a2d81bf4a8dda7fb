/**
 * The edge: one uWS app on 127.0.0.1 with /ws and the HTTP routes, the knock that finds a
 * taken port, listening (bounded wait through TIME_WAIT) and closing sockets. What sits behind
 * the routes — pool, health, CI results, commands — is handed in by the composition root.
 */
import { connect } from 'node:net';
import type { Config } from '../config.js';
import type { IngestPool } from '../pool/ingest-pool.js';
import { log } from '../log.js';
import { EdgeStats } from './edge-stats.js';
import { createGuard } from './guard.js';
import { HttpEdge, type HttpEdgeOptions } from './http.js';
import { uws, type TemplatedApp, type us_listen_socket } from './uws.js';
import { WsEdge, type WsEdgeOptions } from './ws.js';

/**
 * uWS listens with SO_REUSEPORT, so a second server on the same port would silently share it
 * (and its exclusive mode drops SO_REUSEADDR, so it cannot rebind while old connections
 * linger). So before listening we knock: if something accepts a connection, the port is taken.
 */
function someoneListens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' });
    const done = (taken: boolean): void => {
      sock.destroy();
      resolve(taken);
    };
    sock.setTimeout(1000, () => done(true)); // a listener too busy to accept is still a listener
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

export class PortInUseError extends Error {
  override name = 'PortInUseError';
  constructor(readonly port: number) {
    super(`port ${port} on 127.0.0.1 is already in use (another gasoline?); pick another with --port or GASOLINE_PORT`);
  }
}

/** Knocks before anything costly is built: a taken port fails fast. Port 0 is never taken. */
export async function assertPortFree(port: number): Promise<void> {
  if (port !== 0 && (await someoneListens(port))) throw new PortInUseError(port);
}

export interface EdgeOptions {
  config: Readonly<Config>;
  pool: IngestPool;
  health: HttpEdgeOptions['health'];
  metrics?: HttpEdgeOptions['metrics'];
  ciResult: HttpEdgeOptions['ciResult'];
  fetchRoute?: HttpEdgeOptions['fetchRoute'];
  onResult: NonNullable<WsEdgeOptions['onResult']>;
  onProducerChange: NonNullable<WsEdgeOptions['onProducerChange']>;
  pairing?: WsEdgeOptions['pairing'];
  panelTokens?: WsEdgeOptions['panelTokens'];
  pairingRoute?: HttpEdgeOptions['pairing'];
}

export class Edge {
  readonly stats = new EdgeStats();
  readonly ws: WsEdge;
  readonly http: HttpEdge;
  private readonly app: TemplatedApp;
  private listenSocket: us_listen_socket | false = false;
  /** the configured port until listening, then the bound one (port 0 picks a free port) */
  private bound: number;

  constructor(private readonly o: EdgeOptions) {
    this.bound = o.config.port;
    const guard = createGuard(() => this.bound, o.config.allowed_origins);
    const { config, pool } = o;
    const stats = this.stats;
    this.ws = new WsEdge({ config, pool, guard, stats, onResult: o.onResult, onProducerChange: o.onProducerChange, ...(o.pairing ? { pairing: o.pairing } : {}), ...(o.panelTokens ? { panelTokens: o.panelTokens } : {}) });
    this.http = new HttpEdge({ config, pool, guard, stats, health: o.health, metrics: o.metrics, ciResult: o.ciResult, ...(o.fetchRoute ? { fetchRoute: o.fetchRoute } : {}), ...(o.pairingRoute ? { pairing: o.pairingRoute } : {}) });
    this.app = uws.App();
    this.ws.attach(this.app);
    this.http.attach(this.app);
  }

  get port(): number {
    return this.bound;
  }

  /** Binds 127.0.0.1; throws PortInUseError when the port stays taken past the rebind wait. */
  async listen(): Promise<number> {
    const { port, limits } = this.o.config;
    const listenOnce = (): Promise<us_listen_socket | false> => new Promise((resolve) => this.app.listen('127.0.0.1', port, (s) => resolve(s)));
    let socket = await listenOnce();
    // uSockets sets no SO_REUSEADDR, so connections a previous run closed hold the port in
    // TIME_WAIT for up to 60 s even though nobody listens. Wait for them (bounded), saying so.
    const waitUntil = Date.now() + limits.rebind_wait_ms;
    if (!socket && port !== 0) log.warn('port is held by closed connections of a previous run (TIME_WAIT); waiting for it', { port, max_wait_ms: limits.rebind_wait_ms });
    while (!socket && port !== 0 && Date.now() < waitUntil) {
      await new Promise((r) => setTimeout(r, 250));
      if (await someoneListens(port)) break;
      socket = await listenOnce();
    }
    if (!socket) throw new PortInUseError(port);
    this.listenSocket = socket;
    this.bound = uws.us_socket_local_port(socket as never);
    return this.bound;
  }

  /** Refuses new frames and requests and closes the listening socket; open connections stay. */
  stopAccepting(): void {
    this.ws.stopAccepting();
    this.http.stopAccepting();
    if (this.listenSocket) uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = false;
  }

  /** Closes every WebSocket with 1001 (after the drain). */
  closeSockets(): void {
    this.ws.closeAll('shutting_down');
  }
}
