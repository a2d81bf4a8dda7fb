import { describe, expect, it } from 'vitest';
import { ConfigError, ConfigSchema, loadConfig, totalRingBytes } from '../../src/config.js';
import { EXTENSION_ORIGIN } from '../../src/domain/extension-id.js';
import { tempStateDir } from '../helpers/state-dir.js';

describe('config', () => {
  it('has defaults for everything, rings totalling at most 256 MiB', () => {
    const c = loadConfig({ env: {} });
    expect(c.port).toBe(7890);
    expect(c.mode).toBe('bridge');
    expect(totalRingBytes(c)).toBeLessThanOrEqual(256 * 1024 * 1024);
    expect(c.allowed_origins).toEqual([EXTENSION_ORIGIN]);
    expect(c.pool.threads).toBeGreaterThanOrEqual(1);
    expect(Object.isFrozen(c) && Object.isFrozen(c.rings)).toBe(true);
  });

  it('source maps: on by default with every bound set; GASOLINE_SOURCE_MAPS=off turns them off, nonsense is a problem', () => {
    const d = loadConfig({ env: {} }).source_maps;
    expect(d).toMatchObject({ enabled: true, fetch_timeout_ms: 3000, cache_maps: 32, concurrency: 2, wait_ms: 1500 });
    expect(loadConfig({ env: { GASOLINE_SOURCE_MAPS: 'off' } }).source_maps.enabled).toBe(false);
    expect(loadConfig({ env: { GASOLINE_SOURCE_MAPS: 'on' }, flags: { source_maps: { cache_maps: 4 } } }).source_maps).toMatchObject({ enabled: true, cache_maps: 4 });
    expect(() => loadConfig({ env: { GASOLINE_SOURCE_MAPS: 'maybe' } })).toThrow(/GASOLINE_SOURCE_MAPS: expected on\/off/);
    expect(() => loadConfig({ env: {}, flags: { source_maps: { concurrency: 0 } } })).toThrow(/source_maps.concurrency/);
  });

  it('model: offline by default with every bound set; openai needs base_url and model; the key comes from the config file, never the environment', async () => {
    expect(loadConfig({ env: {} }).model).toEqual({ adapter: 'offline', timeout_ms: 30_000, first_byte_ms: 10_000, retries: 1, max_context_chars: 100_000, max_answer_chars: 32_000 });
    expect(() => loadConfig({ env: {}, flags: { model: { adapter: 'openai' } } })).toThrow(/model.base_url: .*needs base_url[\s\S]*model.model: /);
    expect(() => loadConfig({ env: {}, flags: { model: { retries: 4 } } })).toThrow(/model.retries/);
    expect(() => loadConfig({ env: {}, flags: { model: { timeout_ms: 10 } } })).toThrow(/model.timeout_ms/);
    expect(() => loadConfig({ env: {}, flags: { model: { adapter: 'openai', base_url: 'file:///etc/passwd', model: 'm' } } })).toThrow(/model.base_url: http or https only/);
    const { writeFileSync, rmSync } = await import('node:fs');
    const dir = tempStateDir('gasoline-cfg-');
    try {
      const file = `${dir}/c.json`;
      writeFileSync(file, JSON.stringify({ model: { adapter: 'openai', base_url: 'https://llm.example.test/v1', api_key: 'sk-from-file', model: 'small' } }));
      const env = { OPENAI_API_KEY: 'sk-from-env', GASOLINE_MODEL_API_KEY: 'sk-from-env', GASOLINE_API_KEY: 'sk-from-env' };
      expect(loadConfig({ env, file }).model).toMatchObject({ adapter: 'openai', api_key: 'sk-from-file', model: 'small' });
      expect(loadConfig({ env }).model.api_key).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('applies file < environment < flags', async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = tempStateDir('gasoline-cfg-');
    const file = `${dir}/c.json`;
    writeFileSync(file, JSON.stringify({ port: 1111, rings: { logs: 1048576 }, pool: { threads: 3 } }));
    expect(loadConfig({ env: {}, file }).port).toBe(1111);
    expect(loadConfig({ env: { GASOLINE_PORT: '2222' }, file }).port).toBe(2222);
    const c = loadConfig({ env: { GASOLINE_PORT: '2222', GASOLINE_SERVER: 'true' }, file, flags: { port: 3333 } });
    expect(c.port).toBe(3333);
    expect(c.mode).toBe('server');
    expect(c.rings.logs).toBe(1048576);
    expect(c.rings.network).toBe(ConfigSchema.parse({}).rings.network);
    expect(c.pool.threads).toBe(3);
  });

  it('reports every problem at once', () => {
    try {
      loadConfig({ env: { GASOLINE_PORT: 'eighty' }, flags: { pool: { threads: 0 }, rings: { logs: 10 }, bogus: 1 } });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const msg = (e as ConfigError).message;
      expect(msg).toContain('GASOLINE_PORT');
      expect(msg).toContain('pool.threads');
      expect(msg).toContain('rings.logs');
      expect(msg).toContain('bogus');
    }
  });

  it('says where a config file is not JSON, never quoting it (the text may be the api key)', async () => {
    const { writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = tempStateDir('gasoline-cfg-');
    const key = 'QZXWKYQZXWKY';
    const problemOf = (text: string): string => {
      const file = join(dir, 'c.json');
      writeFileSync(file, text);
      try {
        loadConfig({ env: {}, file });
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as ConfigError).problems.join('\n');
      }
      return expect.unreachable();
    };
    try {
      // unquoted: V8 says "Unexpected token 'Q', ...": no position, so no line either
      const unquoted = problemOf(`{\n  "model": { "adapter": "openai", "api_key": ${key} }\n}`);
      expect(unquoted).toMatch(/c\.json: not valid JSON$/);
      for (const ch of key) expect(unquoted.replace(dir, '')).not.toContain(ch);
      // V8 gives a position here: line and column, and still not the key
      const unterminated = problemOf(`{\n  "model": {\n    "api_key": "${key}`);
      expect(unterminated).toMatch(/c\.json: not valid JSON at line 3, column 29$/);
      for (const ch of key) expect(unterminated.replace(dir, '')).not.toContain(ch);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the file when it is not JSON', () => {
    expect(() => loadConfig({ env: {}, file: '/nonexistent/gasoline.json' })).toThrow(/gasoline\.json/);
  });
});
