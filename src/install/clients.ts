/**
 * Where each MCP client keeps its servers, and in which shape, as each one documents it:
 *
 * | client      | user scope                                  | project scope          | shape                         |
 * |-------------|---------------------------------------------|------------------------|-------------------------------|
 * | claude      | ~/.claude.json                              | .mcp.json              | JSON `mcpServers`             |
 * | cursor      | ~/.cursor/mcp.json                          | .cursor/mcp.json       | JSON `mcpServers`             |
 * | vscode      | <user config dir>/Code/User/mcp.json        | .vscode/mcp.json       | JSON `servers`, `type: stdio` |
 * | windsurf    | ~/.codeium/windsurf/mcp_config.json         | —                      | JSON `mcpServers`             |
 * | codex       | $CODEX_HOME/config.toml (~/.codex)          | .codex/config.toml     | TOML `[mcp_servers.<name>]`   |
 * | gemini      | ~/.gemini/settings.json                     | .gemini/settings.json  | JSON `mcpServers`             |
 *
 * Project scope is the working directory. The default scope is the one each client's own docs
 * lead with: a project file for Claude Code and VS Code (shared through the repository), the
 * user file for the rest.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export type Scope = 'user' | 'project';
export type Shape = 'mcpServers' | 'vscode' | 'toml';

export interface ClientSpec {
  name: string;
  label: string;
  shape: Shape;
  defaultScope: Scope;
  /** null: the client has no file for that scope */
  path: (scope: Scope, ctx: PathContext) => string | null;
}

export interface PathContext {
  home: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

export function pathContext(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): PathContext {
  return { home: env.HOME || homedir(), cwd, env, platform: process.platform };
}

/** VS Code's user profile folder, per platform (its docs: "User/mcp.json in the profile") */
function vscodeUserDir(c: PathContext): string {
  if (c.platform === 'darwin') return join(c.home, 'Library', 'Application Support', 'Code', 'User');
  if (c.platform === 'win32') return join(c.env.APPDATA || join(c.home, 'AppData', 'Roaming'), 'Code', 'User');
  return join(c.env.XDG_CONFIG_HOME || join(c.home, '.config'), 'Code', 'User');
}

export const CLIENTS: readonly ClientSpec[] = [
  { name: 'claude', label: 'Claude Code', shape: 'mcpServers', defaultScope: 'project', path: (s, c) => (s === 'user' ? join(c.home, '.claude.json') : join(c.cwd, '.mcp.json')) },
  { name: 'cursor', label: 'Cursor', shape: 'mcpServers', defaultScope: 'user', path: (s, c) => join(s === 'user' ? c.home : c.cwd, '.cursor', 'mcp.json') },
  { name: 'vscode', label: 'VS Code', shape: 'vscode', defaultScope: 'project', path: (s, c) => (s === 'user' ? join(vscodeUserDir(c), 'mcp.json') : join(c.cwd, '.vscode', 'mcp.json')) },
  { name: 'windsurf', label: 'Windsurf', shape: 'mcpServers', defaultScope: 'user', path: (s, c) => (s === 'user' ? join(c.home, '.codeium', 'windsurf', 'mcp_config.json') : null) },
  { name: 'codex', label: 'Codex', shape: 'toml', defaultScope: 'user', path: (s, c) => (s === 'user' ? join(c.env.CODEX_HOME || join(c.home, '.codex'), 'config.toml') : join(c.cwd, '.codex', 'config.toml')) },
  { name: 'gemini', label: 'Gemini CLI', shape: 'mcpServers', defaultScope: 'user', path: (s, c) => join(s === 'user' ? c.home : c.cwd, '.gemini', 'settings.json') },
];

/** other names people type for the same client */
const ALIASES: Record<string, string> = { 'claude-code': 'claude', code: 'vscode', 'vs-code': 'vscode', 'gemini-cli': 'gemini' };

export function findClient(name: string): ClientSpec | undefined {
  const n = name.toLowerCase();
  return CLIENTS.find((c) => c.name === (ALIASES[n] ?? n));
}
