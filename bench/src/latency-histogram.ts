/** Mergeable latency histogram in milliseconds: log buckets of 1 % relative width from 1 µs. */
const FLOOR_MS = 0.001;
const GROWTH = Math.log(1.01);

export interface HistogramSnapshot {
  /** bucket index → count (sparse). */
  buckets: Record<string, number>;
  count: number;
  sum: number;
  min: number;
  max: number;
}

export class LatencyHistogram {
  private buckets = new Map<number, number>();
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;

  /** Negative values (clock jitter between processes) count as 0. */
  record(milliseconds: number): void {
    const value = Math.max(milliseconds, 0);
    const index = value <= FLOOR_MS ? 0 : Math.ceil(Math.log(value / FLOOR_MS) / GROWTH);
    this.buckets.set(index, (this.buckets.get(index) ?? 0) + 1);
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  /** Upper bound of the bucket holding the p-th percentile (nearest rank), capped by the max seen. */
  percentile(p: number): number {
    if (this.count === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (const index of [...this.buckets.keys()].sort((a, b) => a - b)) {
      seen += this.buckets.get(index) ?? 0;
      if (seen >= rank) return Math.min(this.max, Math.max(this.min, FLOOR_MS * Math.exp(index * GROWTH)));
    }
    return this.max;
  }

  mean(): number {
    return this.count === 0 ? Number.NaN : this.sum / this.count;
  }

  merge(other: LatencyHistogram | HistogramSnapshot): this {
    const snapshot = other instanceof LatencyHistogram ? other.snapshot() : other;
    for (const [index, count] of Object.entries(snapshot.buckets)) {
      const key = Number(index);
      this.buckets.set(key, (this.buckets.get(key) ?? 0) + count);
    }
    this.count += snapshot.count;
    this.sum += snapshot.sum;
    if (snapshot.count > 0) {
      this.min = Math.min(this.min, snapshot.min);
      this.max = Math.max(this.max, snapshot.max);
    }
    return this;
  }

  snapshot(): HistogramSnapshot {
    return {
      buckets: Object.fromEntries(this.buckets),
      count: this.count,
      sum: this.sum,
      min: this.count ? this.min : 0,
      max: this.count ? this.max : 0,
    };
  }

  static from(snapshot: HistogramSnapshot): LatencyHistogram {
    return new LatencyHistogram().merge(snapshot);
  }
}
