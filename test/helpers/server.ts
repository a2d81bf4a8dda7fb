import { loadConfig, type Config } from '../../src/config.js';
import { startApp, type App, type AppOptions } from '../../src/app.js';
import { setLogLevel } from '../../src/log.js';
import { tempStateDir } from './state-dir.js';
import { newSecret, readSecret } from '../../src/pairing/index.js';

import { TEST_PAIRING_KEY } from './pairing-key.js';

export { TEST_PAIRING_KEY };

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

const KiB = 1024;

/** A real server on 127.0.0.1:0 with small rings and one worker unless told otherwise. */
export async function startTestServer(over: DeepPartial<Config> = {}, opts: { faultInjection?: boolean; mcpHttp?: boolean | 'panel'; mcpHttpLimits?: AppOptions['mcpHttpLimits']; pairingKey?: string; pairingKdfIterations?: number; panelTokenTtlMs?: number } = {}): Promise<App> {
  const base: Record<string, unknown> = {
    port: 0,
    mode: 'server',
    // client state is saved here (#16): each server its own, removed when the test file ends
    state_dir: over.state_dir ?? tempStateDir(),
    log_level: 'silent',
    rings: { logs: 256 * KiB, network: 256 * KiB, network_bodies: 256 * KiB, ws_events: 128 * KiB, actions: 128 * KiB, perf: 64 * KiB, ext_logs: 64 * KiB },
    pool: { threads: 1, warmup_batches: 4, input_bytes: 4 * 1024 * KiB, shutdown_drain_ms: 2000 },
    // tests of other features act as before approvals existed (the product default is ask);
    // test/integration/approvals.test.ts runs with ask and a fake extension that decides
    approvals: { policy: { mutating: 'allow', destructive: 'allow' } },
  };
  const merged = merge(base, over as Record<string, unknown>);
  const config = loadConfig({ flags: merged, env: {} });
  if (!readSecret(config.state_dir)) newSecret(config.state_dir, opts.pairingKey ?? TEST_PAIRING_KEY);
  setLogLevel(config.log_level);
  return startApp({ config, faultInjection: opts.faultInjection ?? false, ...(opts.mcpHttp ? { mcpHttp: opts.mcpHttp } : {}), ...(opts.mcpHttpLimits ? { mcpHttpLimits: opts.mcpHttpLimits } : {}), ...(opts.pairingKdfIterations ? { pairingKdfIterations: opts.pairingKdfIterations } : {}), ...(opts.panelTokenTtlMs ? { panelTokenTtlMs: opts.panelTokenTtlMs } : {}) });
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && prev && typeof prev === 'object' ? merge(prev as Record<string, unknown>, v as Record<string, unknown>) : v;
  }
  return out;
}
