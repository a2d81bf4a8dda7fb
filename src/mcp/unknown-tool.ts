/**
 * An unknown tool is a malformed request (a JSON-RPC error), not a tool failure; the SDK would
 * answer it as an isError result. One wording for the standalone server and the bridge, which
 * refuses it itself without loading the tool schemas.
 */
export function unknownToolError(name: unknown, known: readonly string[]): { code: number; message: string } | null {
  return typeof name === 'string' && known.includes(name) ? null : { code: -32602, message: `unknown tool ${JSON.stringify(name)}; tools: ${known.join(', ')}` };
}
