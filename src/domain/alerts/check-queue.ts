/**
 * The shared-state checks one batch leaves for its commit, in the order its records were seen.
 *
 * Detection marks what it saw in the shared DetectState ("this signature was seen", error
 * buckets, repeat windows, perf baselines). Marked at see-time, a batch whose commit then failed
 * (crash, lock timeout) would leave its error "seen" while its alert was dropped, and the retry of
 * the same batch would find nothing new: the alert was lost. So see() only queues the check and
 * the detector runs the queue once the batch committed; an uncommitted batch's queue is dropped.
 *
 * Parallel arrays, reused from batch to batch: on the hottest path a queued check costs a few
 * stores, no allocation once the arrays have grown to the largest batch.
 */
export class CheckQueue<R> {
  readonly kind: number[] = [];
  readonly rec: Array<R | undefined> = [];
  /** a hash the see-time pass already computed (the error signature), or 0 */
  readonly key: number[] = [];
  /** the second the record was seen in: windows are measured from it, not from the commit */
  readonly sec: number[] = [];
  readonly edgeAt: number[] = [];
  readonly pageUrl: Array<string | undefined> = [];
  length = 0;

  push(kind: number, rec: R, key: number, sec: number, edgeAt: number, pageUrl: string | undefined): void {
    const i = this.length++;
    this.kind[i] = kind;
    this.rec[i] = rec;
    this.key[i] = key;
    this.sec[i] = sec;
    this.edgeAt[i] = edgeAt;
    this.pageUrl[i] = pageUrl;
  }

  clear(): void {
    // drop the references so a past batch's records are not kept alive until overwritten
    for (let i = 0; i < this.length; i++) {
      this.rec[i] = undefined;
      this.pageUrl[i] = undefined;
    }
    this.length = 0;
  }
}
