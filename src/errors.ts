/**
 * The one error catalog. Every error that crosses a boundary has a stable string code;
 * each boundary maps the code once (WebSocket close code, HTTP status, MCP isError text).
 * test/unit/errors.test.ts keeps this table and the docs in sync.
 */
export interface ErrorSpec {
  /** HTTP status when the error ends an HTTP request. */
  readonly http: number;
  /** WebSocket close code when the error ends a connection; 0 = the connection stays open. */
  readonly wsClose: number;
  readonly summary: string;
}

export const ERRORS = {
  // --- edge / handshake
  host_refused: { http: 403, wsClose: 0, summary: 'Host header is not a loopback name with our port' },
  origin_refused: { http: 403, wsClose: 0, summary: 'Origin is not in the allowlist' },
  not_found: { http: 404, wsClose: 0, summary: 'no such route' },
  method_not_allowed: { http: 405, wsClose: 0, summary: 'method not allowed on this route' },
  too_many_connections: { http: 503, wsClose: 1013, summary: 'connection limit reached' },
  connection_shed: { http: 503, wsClose: 1013, summary: 'an unauthenticated connection was closed to make room for a newer one' },
  shutting_down: { http: 503, wsClose: 1001, summary: 'server is shutting down' },
  // --- pairing (docs/SECURITY.md): the per-connection proof and the one-time exchange
  pairing_proof_invalid: { http: 403, wsClose: 1008, summary: 'the producer\'s pairing proof is wrong: it is not paired with this server (pair it again)' },
  producer_unpaired: { http: 403, wsClose: 1008, summary: 'pairing.unpaired is "refuse": records are taken only from a producer that proved pairing' },
  pairing_closed: { http: 409, wsClose: 1008, summary: 'no pairing window is open: run `gasoline pair` and type its code within two minutes' },
  pairing_code_wrong: { http: 403, wsClose: 1008, summary: 'the pairing code is wrong; attempts are limited per window' },
  pairing_locked: { http: 429, wsClose: 1008, summary: 'too many wrong pairing codes: the window is closed; run `gasoline pair` again' },
  pairing_invalid: { http: 400, wsClose: 1008, summary: 'a pairing frame is malformed or out of turn' },
  // --- bridge ↔ daemon (/mcp)
  unauthorized: { http: 401, wsClose: 0, summary: 'missing or wrong bearer token' },
  invalid_client_id: { http: 400, wsClose: 0, summary: 'the x-gasoline-client header is not a valid client id' },
  mcp_sessions_full: { http: 503, wsClose: 0, summary: 'the daemon holds its maximum of MCP sessions' },
  panel_unverified: { http: 403, wsClose: 0, summary: 'a panel token is issued only over a /ws connection that proved the pairing secret; pair the extension (gasoline pair)' },
  // --- frames
  text_frame: { http: 400, wsClose: 1003, summary: 'text frames are not accepted; send binary msgpack' },
  frame_too_large: { http: 413, wsClose: 1009, summary: 'frame larger than max_frame' },
  hello_timeout: { http: 400, wsClose: 1008, summary: 'no hello within the deadline' },
  frame_timeout: { http: 408, wsClose: 1008, summary: 'no complete frame (nor pong) within the frame deadline' },
  hello_required: { http: 400, wsClose: 1008, summary: 'the first frame must be hello' },
  duplicate_hello: { http: 400, wsClose: 0, summary: 'hello was already received on this connection' },
  unsupported_version: { http: 400, wsClose: 1008, summary: 'protocol version not supported' },
  msgpack_invalid: { http: 400, wsClose: 0, summary: 'bytes are not valid msgpack' },
  msgpack_truncated: { http: 400, wsClose: 0, summary: 'msgpack ends before its declared content' },
  msgpack_too_deep: { http: 400, wsClose: 0, summary: 'msgpack nesting deeper than allowed' },
  msgpack_too_many_elements: { http: 400, wsClose: 0, summary: 'msgpack declares more elements than allowed' },
  msgpack_bad_length: { http: 400, wsClose: 0, summary: 'msgpack declares a length beyond the frame' },
  invalid_utf8: { http: 400, wsClose: 0, summary: 'string is not valid UTF-8' },
  not_a_map: { http: 400, wsClose: 0, summary: 'top level is not a map' },
  unknown_frame_type: { http: 400, wsClose: 0, summary: 'unknown frame type t' },
  invalid_frame: { http: 400, wsClose: 0, summary: 'frame fields are invalid' },
  too_many_events: { http: 400, wsClose: 0, summary: 'batch holds more events than max_events_per_batch' },
  out_of_order: { http: 400, wsClose: 0, summary: 'batch seq is ahead of the next expected seq' },
  // --- records
  invalid_record: { http: 400, wsClose: 0, summary: 'record does not match its schema' },
  record_too_large: { http: 413, wsClose: 0, summary: 'record larger than its ring' },
  // --- HTTP bodies
  body_too_large: { http: 413, wsClose: 0, summary: 'request body larger than the limit' },
  bad_json: { http: 400, wsClose: 0, summary: 'request body is not valid JSON' },
  invalid_argument: { http: 400, wsClose: 0, summary: 'a tool argument is missing, out of range or malformed (e.g. streaming throttle_seconds)' },
  pattern_refused: { http: 400, wsClose: 0, summary: 'a user pattern (noise or redaction rule) is not RE2 syntax (backreferences, lookaround), is too large, or (redaction) matches the empty string' },
  bad_content_type: { http: 415, wsClose: 0, summary: 'content type must be application/json' },
  invalid_body: { http: 400, wsClose: 0, summary: 'request body does not match the route schema' },
  // --- capacity
  overloaded: { http: 503, wsClose: 0, summary: 'server is overloaded; retry after the delay' },
  input_full: { http: 503, wsClose: 1013, summary: 'ingest input buffer is full' },
  poison: { http: 500, wsClose: 0, summary: 'batch crashed a worker twice and was discarded' },
  internal: { http: 500, wsClose: 1011, summary: 'internal error' },
  // --- tool calls (MCP isError text starts with the code: src/mcp/error-result.ts)
  no_ingest: { http: 503, wsClose: 0, summary: 'the ingest server is not running (its port is taken or it did not start): no browser data, no commands' },
  unknown_name: { http: 404, wsClose: 0, summary: 'no checkpoint, noise rule or store key by that name for this client' },
  limit_reached: { http: 409, wsClose: 0, summary: 'a per-client limit (checkpoints, noise rules, store keys) is reached; remove one first' },
  client_limit: { http: 503, wsClose: 0, summary: 'the daemon already serves its maximum of clients, each with a session open; close an agent or raise clients.max' },
  buffers_busy: { http: 503, wsClose: 0, summary: 'the shared buffers are being written by ingest right now; try again' },
  bad_cursor: { http: 400, wsClose: 0, summary: 'cursor was not handed out by this kind of result' },
  scan_busy: { http: 503, wsClose: 0, summary: 'too many reads are waiting for the scan worker' },
  scan_failed: { http: 500, wsClose: 0, summary: 'the scan worker crashed or did not answer in time; the read can be repeated' },
  write_failed: { http: 500, wsClose: 0, summary: 'a file the tool writes (a HAR export) could not be written: the folder or the disk refused it' },
  // --- on-demand commands (server → extension → result)
  no_extension: { http: 503, wsClose: 0, summary: 'no extension connected to run the command' },
  extension_unverified: { http: 503, wsClose: 0, summary: 'a producer says it is the extension but has not proven pairing (or lacks its Origin); no command is sent to it, none of its results is taken' },
  too_many_pending: { http: 503, wsClose: 0, summary: 'too many commands waiting for the extension' },
  command_timeout: { http: 504, wsClose: 0, summary: 'the extension did not answer the command before its deadline' },
  command_failed: { http: 502, wsClose: 0, summary: 'the extension could not run the command' },
  invalid_params: { http: 400, wsClose: 0, summary: 'command parameters are invalid' },
  invalid_result: { http: 502, wsClose: 0, summary: 'the result frame does not match its command type' },
  result_too_large: { http: 502, wsClose: 0, summary: 'the result was larger than max_frame' },
  unknown_result: { http: 400, wsClose: 0, summary: 'result frame for no pending command' },
  unknown_query: { http: 404, wsClose: 0, summary: 'no such query for this client' },
  agent_control_off: { http: 403, wsClose: 0, summary: 'agent control is disabled in the extension popup' },
  extension_disconnected: { http: 503, wsClose: 0, summary: 'the extension disconnected before answering' },
  // --- approvals (issue 19: mutating and destructive actions ask the user in the browser)
  approval_required: { http: 202, wsClose: 0, summary: "the action needs the user's approval in the browser; the answer names an approval_id to poll with (the same call plus approval_id)" },
  approval_denied: { http: 403, wsClose: 0, summary: 'the user denied the action' },
  approval_expired: { http: 410, wsClose: 0, summary: 'the approval (or its request) expired before it was used: tokens live 60 s, requests until their deadline' },
  approval_scope: { http: 403, wsClose: 0, summary: 'the approval was given for another action, tab, target or client; it covers only the exact call it was asked for' },
  approval_replayed: { http: 409, wsClose: 0, summary: 'the approval was used already: each approval runs one call' },
  approval_unknown: { http: 404, wsClose: 0, summary: 'no such approval: never issued, or long gone' },
  action_blocked: { http: 403, wsClose: 0, summary: "the user's policy (approvals.policy deny, or approvals.watch) refuses this class of action; no approval lifts it" },
  // --- the model adapter behind the redaction gateway (issue 19 item 5): an answer, never /health
  model_egress_blocked: { http: 403, wsClose: 0, summary: 'the redaction gateway could not redact the model-bound payload, so nothing was sent to the model' },
  model_unavailable: { http: 502, wsClose: 0, summary: 'the model provider refused the request, failed (5xx, network) after the retries, or is not configured' },
  model_timeout: { http: 504, wsClose: 0, summary: 'the model provider sent no first byte, or no whole answer, within model.timeout_ms' },
  model_answer_too_large: { http: 502, wsClose: 0, summary: 'the model\'s streamed answer passed its size bound; the call was cut' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export class GasolineError extends Error {
  readonly code: ErrorCode;
  readonly detail: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, message?: string, detail?: Record<string, unknown>) {
    super(message ?? ERRORS[code].summary);
    this.name = 'GasolineError';
    this.code = code;
    this.detail = detail;
  }
  get http(): number {
    return ERRORS[this.code].http;
  }
  get wsClose(): number {
    return ERRORS[this.code].wsClose;
  }
}

export function gasolineError(code: ErrorCode, message?: string, detail?: Record<string, unknown>): GasolineError {
  return new GasolineError(code, message, detail);
}
