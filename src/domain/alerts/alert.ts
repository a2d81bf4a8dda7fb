/**
 * The alert: what the server tells an agent without being asked, passively (piggybacked on
 * observe) or actively (MCP notifications/message). Small, bounded, redacted at construction.
 */
import { z } from 'zod';

export const SEVERITIES = ['info', 'warning', 'error'] as const;
export const CATEGORIES = ['regression', 'anomaly', 'ci', 'noise', 'threshold', 'security', 'user_frustration'] as const;

export type Severity = (typeof SEVERITIES)[number];
export type Category = (typeof CATEGORIES)[number];

export const AlertSchema = z
  .object({
    severity: z.enum(SEVERITIES),
    category: z.enum(CATEGORIES),
    title: z.string().max(200),
    detail: z.string().max(2000),
    /** ISO 8601 */
    timestamp: z.string().max(40),
    source: z.string().max(40),
    url: z.string().max(2000).optional(),
    count: z.number().int().min(1).optional(),
    dedup_key: z.string().max(300),
    correlation_id: z.string().max(80),
    context: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export type Alert = z.infer<typeof AlertSchema>;

/** An alert with what delivery needs to know about it and never shows. */
export interface AlertEnvelope {
  alert: Alert;
  /** performance.timeOrigin-based ms at which the event that raised it reached the edge (0 if none) */
  edgeTime: number;
  /** same clock: when a worker began the frame or body that raised it (worker alerts only) */
  startTime?: number;
  /** same clock: when the worker handed it to the alert ring (worker alerts only) */
  publishTime?: number;
  /** same clock: when main read it from the alert ring */
  readTime?: number;
}

export const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2 };

/** security findings raised as their records arrive (the checks of analyze security) */
export const SECURITY_SOURCE = 'security';
/** rage and dead clicks; the URL is the page's */
export const FRUSTRATION_SOURCE = 'frustration_detector';

/** The categories and sources whose alerts carry a URL that means something to a URL filter. */
export function urlMeaningful(a: Alert): boolean {
  return a.url !== undefined && (a.source === 'anomaly_detector' || a.source === 'performance_monitor' || a.source === SECURITY_SOURCE || a.source === FRUSTRATION_SOURCE);
}

let corr = 0;
/** Process-unique, short, sortable enough to correlate a notification with a later observe. */
export function correlationId(prefix: string): string {
  corr = (corr + 1) % 1e9;
  return `${prefix}-${Date.now().toString(36)}-${corr.toString(36)}`;
}
