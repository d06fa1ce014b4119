/**
 * A relay's CPU per stream, split into what each token costs and what a stream costs besides,
 * from two batches of the same path: long streams and short streams.
 */

/** CPU milliseconds per stream over a batch of streams of `tokens` tokens each. */
export interface StreamCpuReading {
  tokens: number;
  msPerStream: number;
}

export interface StreamCpuSplit {
  /** CPU microseconds per relayed token. */
  perTokenUs: number;
  /** CPU milliseconds per stream besides its tokens (set-up and finish). */
  perStreamMs: number;
}

/** Per-token cost = the difference between the batches per extra token; the rest is per stream. */
export function splitStreamCpu(long: StreamCpuReading, short: StreamCpuReading): StreamCpuSplit {
  const perTokenMs = (long.msPerStream - short.msPerStream) / (long.tokens - short.tokens);
  return { perTokenUs: perTokenMs * 1000, perStreamMs: short.msPerStream - perTokenMs * short.tokens };
}
