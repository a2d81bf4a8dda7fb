/**
 * A fixed-bucket histogram kept as plain numbers, written in Prometheus text format by itself.
 * Why not prom-client's: its observations must count from the first tool call and push, and
 * prom-client (with the process collectors it brings) is loaded only on the first scrape —
 * ~14 MB of RSS an idle daemon that nobody scrapes should not hold (issue 17).
 *
 * Label values must already be bounded and of a safe shape (src/metrics.ts `boundedLabel`): they
 * are written unescaped.
 */
export class FixedHistogram<L extends string = never> {
  /** one series per label set, keyed by its values joined */
  private readonly series = new Map<string, { labels: Record<string, string>; counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    private readonly labelNames: readonly L[] = [],
  ) {}

  observe(labels: Record<L, string>, v: number): void {
    const key = this.labelNames.map((l) => labels[l]).join('\u0000');
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    // counts are per bucket here and made cumulative when written
    const i = this.buckets.findIndex((b) => v <= b);
    if (i >= 0) s.counts[i]!++;
    s.sum += v;
    s.count++;
  }

  /** HELP, TYPE and the samples; a histogram without labels shows zeros before its first observation. */
  text(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    const series = [...this.series.values()];
    if (series.length === 0 && this.labelNames.length === 0) series.push({ labels: {}, counts: this.buckets.map(() => 0), sum: 0, count: 0 });
    for (const s of series) {
      const pairs = Object.entries(s.labels).map(([k, v]) => `${k}="${v}"`);
      const with_ = (extra: string[]): string => (extra.length ? `{${extra.join(',')}}` : '');
      let acc = 0;
      this.buckets.forEach((b, i) => {
        acc += s.counts[i]!;
        lines.push(`${this.name}_bucket${with_([`le="${b}"`, ...pairs])} ${acc}`);
      });
      lines.push(`${this.name}_bucket${with_(['le="+Inf"', ...pairs])} ${s.count}`);
      lines.push(`${this.name}_sum${with_(pairs)} ${s.sum}`);
      lines.push(`${this.name}_count${with_(pairs)} ${s.count}`);
    }
    return lines.join('\n') + '\n';
  }
}
