/** How a redaction corpus line arrives: the record and field its carrier puts it in. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Kind } from '../../src/domain/kinds.js';

export interface Line {
  carrier: 'header' | 'url' | 'json_body' | 'text_body' | 'console_arg' | 'ws_frame';
  class: string;
  text: string;
  secret?: string;
  lookalike?: boolean;
}

/** test/fixtures/redaction-corpus.jsonl, made by test/fixtures/redaction-corpus-gen.mjs */
export function loadCorpus(): Line[] {
  return readFileSync(fileURLToPath(new URL('../fixtures/redaction-corpus.jsonl', import.meta.url)), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
}

/** The record a line arrives in, and the field it is carried by. */
export function carry(l: Line): [Kind, Record<string, unknown>, string] {
  switch (l.carrier) {
    case 'header': {
      const at = l.text.indexOf(': ');
      return ['network_bodies', { url: 'https://app.example.test/api', request_headers: { Accept: 'application/json', [l.text.slice(0, at)]: l.text.slice(at + 2) }, content_type: 'application/json' }, 'request_headers'];
    }
    case 'url':
      return ['network', { url: l.text, page_url: 'https://app.example.test/', error: '' }, 'url'];
    case 'json_body':
      return ['network_bodies', { url: 'https://app.example.test/api', request_body: l.text, content_type: 'application/json' }, 'request_body'];
    case 'text_body':
      return ['network_bodies', { url: 'https://app.example.test/debug', response_body: l.text, content_type: 'text/html' }, 'response_body'];
    case 'console_arg':
      return ['logs', { message: 'console.log', args: JSON.parse(l.text) as unknown[], stack: '', url: 'https://app.example.test/', source: 'console' }, 'args'];
    case 'ws_frame':
      return ['ws_events', { url: 'wss://app.example.test/socket', data: l.text, reason: '' }, 'data'];
  }
}

