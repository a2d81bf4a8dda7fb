/**
 * The model room's shapes (issue 19 item 5): its config section, what a triage asks a model
 * (the request), and what comes back (the answer). The schema is the type: every shape below is
 * z.infer of its schema, and the gateway (gateway.ts) hands adapters only a parsed, redacted one.
 */
import { z } from 'zod';

export const MODEL_ADAPTERS = ['offline', 'openai'] as const;
export type ModelAdapterName = (typeof MODEL_ADAPTERS)[number];

/**
 * `model` in the config file. The key is read from the config file only: no environment variable
 * (an agent can set those for the process it starts) and no flag (flags show in `ps`). It is never
 * sent to the extension, logged, or shown in /health.
 */
export const ModelConfigSchema = z
  .object({
    adapter: z.enum(MODEL_ADAPTERS).default('offline'),
    /** the OpenAI-compatible API root; {base_url}/chat/completions is asked */
    base_url: z
      .string()
      .max(2000)
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'http or https only')
      .optional(),
    api_key: z.string().min(1).max(4096).optional(),
    model: z.string().min(1).max(200).optional(),
    /** the whole answer, retries included */
    timeout_ms: z.number().int().min(1000).max(300_000).default(30_000),
    /** connect until the first byte of the answer, per attempt (capped by timeout_ms) */
    first_byte_ms: z.number().int().min(200).max(120_000).default(10_000),
    /** attempts after the first, for 429, 5xx and network errors before any byte of the answer */
    retries: z.number().int().min(0).max(3).default(1),
    /** the context a model is sent, cut at record boundaries (what was cut is said) */
    max_context_chars: z.number().int().min(2000).max(1_000_000).default(100_000),
    /** the streamed answer is cut (model_answer_too_large) past this */
    max_answer_chars: z.number().int().min(1000).max(200_000).default(32_000),
  })
  .strict()
  .superRefine((m, c) => {
    if (m.adapter !== 'openai') return;
    if (!m.base_url) c.addIssue({ code: 'custom', path: ['base_url'], message: 'model.adapter "openai" needs base_url (e.g. "https://api.openai.com/v1")' });
    if (!m.model) c.addIssue({ code: 'custom', path: ['model'], message: 'model.adapter "openai" needs model (the provider\'s model name)' });
  });

export type ModelConfig = z.infer<typeof ModelConfigSchema>;

/** One failing piece of evidence that came before an error (its bundle): an action, a request, a warning. */
export const BeforeSchema = z.object({
  kind: z.enum(['action', 'request', 'log']),
  text: z.string().max(2000),
  /** an action's target, for analyze({target:"dom", selector}) */
  selector: z.string().max(1000).optional(),
});

export const TriageErrorSchema = z.object({
  message: z.string().max(4000),
  /** the normalized signature: what the error is folded by */
  signature: z.string().max(1000),
  count: z.number().int().min(1),
  first: z.number(),
  last: z.number(),
  /** the top frame, source-mapped when a map resolved it ("src/cart.ts:42:7"), else as generated */
  location: z.string().max(1000).optional(),
  /** true when location is the original (source-mapped) position */
  mapped: z.boolean().optional(),
  page: z.string().max(2000).optional(),
  before: z.array(BeforeSchema).max(24).default([]),
});

export const TriageRequestSchema = z.object({
  method: z.string().max(16),
  url: z.string().max(4000),
  /** 0: no response (network error, CORS, aborted) */
  status: z.number().int(),
  count: z.number().int().min(1),
  last: z.number(),
  error: z.string().max(2000).optional(),
});

/** What a triage is about: read from the store by the tool (src/mcp/tools/triage-context.ts), nothing else. */
export const TriageContextSchema = z.object({
  /** the oldest record read, ms epoch; null when nothing is buffered */
  since: z.number().nullable(),
  /** records read across the kinds a triage looks at */
  records: z.number().int().min(0),
  extension: z.enum(['connected', 'unpaired', 'absent']),
  errors: z.array(TriageErrorSchema).max(200),
  failing: z.array(TriageRequestSchema).max(200),
  /** distinct errors and failing endpoints beyond the ones listed */
  more_errors: z.number().int().min(0).default(0),
  more_failing: z.number().int().min(0).default(0),
  /** a read stopped on its bound before the newest record */
  partial: z.boolean().default(false),
});

export type Before = z.infer<typeof BeforeSchema>;
export type TriageError = z.infer<typeof TriageErrorSchema>;
export type TriageRequest = z.infer<typeof TriageRequestSchema>;
export type TriageContext = z.infer<typeof TriageContextSchema>;

export const QUESTION_MAX = 2000;

/** What a triage asks, before the gateway: every string in it is model-bound. */
export const ModelRequestSchema = z.object({
  system: z.string().max(8000),
  question: z.string().max(QUESTION_MAX).optional(),
  context: TriageContextSchema,
});
export type ModelRequest = z.infer<typeof ModelRequestSchema>;

/**
 * What the gateway lets out: the same request with every string through the rules in force, the
 * context rendered as text within max_context_chars, and what the cut left out.
 */
export const EgressPayloadSchema = z.object({
  system: z.string(),
  /** the context as the model reads it, then the question */
  user: z.string(),
  question: z.string().optional(),
  /** the redacted structured context: what the offline adapter concludes from */
  context: TriageContextSchema,
  /**
   * secrets hidden in what leaves: the markers in the context and question (redacted at ingest or
   * by the gateway), and those the rules put into the system prompt (not the prompt's own words)
   */
  redacted: z.number().int().min(0),
  /** the rule set's version this payload passed */
  policy: z.number().int().min(0),
  /** records of the context left out by max_context_chars */
  cut: z.object({ errors: z.number().int().min(0), failing: z.number().int().min(0) }),
});
export type EgressPayload = z.infer<typeof EgressPayloadSchema>;

export const ModelAnswerSchema = z.object({
  text: z.string(),
  adapter: z.enum(MODEL_ADAPTERS),
  /** the provider's model name, when one answered */
  model: z.string().optional(),
});
export type ModelAnswer = z.infer<typeof ModelAnswerSchema>;
