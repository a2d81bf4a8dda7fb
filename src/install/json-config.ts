/**
 * Gasoline's entry merged into a JSON config file: every other key and server kept, in order;
 * the file's indentation kept. Comments cannot survive JSON.parse, so a file that holds any (VS
 * Code's mcp.json allows them) is refused, with the entry to paste by hand.
 */
import { InstallError, SERVER_NAME, type ServerEntry } from './entry.js';

type Json = Record<string, unknown>;

/** `servers` with `type` (VS Code) or `mcpServers` (everyone else) */
export function jsonEntry(shape: 'mcpServers' | 'vscode', e: ServerEntry): Json {
  return shape === 'vscode' ? { type: 'stdio', command: e.command, args: e.args } : { command: e.command, args: e.args };
}

export function snippetJson(shape: 'mcpServers' | 'vscode', e: ServerEntry): string {
  return JSON.stringify({ [shape === 'vscode' ? 'servers' : 'mcpServers']: { [SERVER_NAME]: jsonEntry(shape, e) } }, null, 2);
}

/** The file's text with our entry set; `before` null: the file does not exist yet. */
export function mergeJson(before: string | null, shape: 'mcpServers' | 'vscode', e: ServerEntry, path: string): string {
  let doc: Json = {};
  if (before !== null && before.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(before);
    } catch (err) {
      throw new InstallError(`${path} is not plain JSON (${(err as Error).message}; comments or trailing commas cannot be kept by a rewrite); add this by hand:\n${snippetJson(shape, e)}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InstallError(`${path}: the top level is not a JSON object; add this by hand:\n${snippetJson(shape, e)}`);
    doc = parsed as Json;
  }
  const key = shape === 'vscode' ? 'servers' : 'mcpServers';
  const servers = doc[key] ?? {};
  if (!servers || typeof servers !== 'object' || Array.isArray(servers)) throw new InstallError(`${path}: "${key}" is not an object; fix it, then run this again`);
  doc[key] = { ...(servers as Json), [SERVER_NAME]: jsonEntry(shape, e) };
  return `${JSON.stringify(doc, null, indentOf(before))}\n`;
}

/** the indentation the file already uses (2 spaces when it has none to go by) */
function indentOf(text: string | null): string | number {
  const m = text ? /^[{[]\s*\n([ \t]+)\S/.exec(text) : null;
  return m ? m[1]! : 2;
}
