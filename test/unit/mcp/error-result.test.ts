/** Issue 15: tools throw GasolineError; one mapping turns any error into the MCP isError result. */
import { describe, expect, it } from 'vitest';
import { gasolineError } from '../../../src/errors.js';
import { errorResult, errorText } from '../../../src/mcp/error-result.js';

describe('error result', () => {
  it('starts with the stable code, then the message that says what to do', () => {
    const r = errorResult(gasolineError('bad_cursor', 'after: "zz" is not a cursor of observe({what:"logs"}); use the cursor from that result'), (s) => s);
    expect(r.isError).toBe(true);
    expect(r.content).toEqual([{ type: 'text', text: 'bad_cursor: after: "zz" is not a cursor of observe({what:"logs"}); use the cursor from that result' }]);
  });

  it('a code without a message reads as the catalog summary', () => {
    expect(errorText(gasolineError('scan_busy'))).toBe('scan_busy: too many reads are waiting for the scan worker');
  });

  it('an error without a code answers as internal, and says the server keeps running', () => {
    expect(errorText(new TypeError('x is undefined'))).toMatch(/^internal: x is undefined; the server keeps running/);
    expect(errorText('thrown string')).toMatch(/^internal: thrown string;/);
  });

  it('passes the text through egress redaction', () => {
    const r = errorResult(gasolineError('invalid_argument', 'token=abc123 refused'), (s) => s.replace(/abc123/, '[REDACTED]'));
    expect((r.content[0] as { text: string }).text).toBe('invalid_argument: token=[REDACTED] refused');
  });
});
