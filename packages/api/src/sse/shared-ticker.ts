/** Something called on every tick of a shared interval; `verify` marks its turn for costly checks. */
export interface TickTarget {
  onTick(verify: boolean): void;
}

/** At most this many listeners per tick get `verify = true` (round robin over the others). */
export const VERIFICATIONS_PER_TICK = 64;

interface Ticker {
  /** Each target with its serial number (its place in the verification round robin). */
  targets: Map<TickTarget, number>;
  timer: ReturnType<typeof setInterval> | null;
  ticks: number;
  nextSerial: number;
}

const tickers = new Map<number, Ticker>();

/**
 * Targets ticked per event-loop turn. 10k pings written at once stalled live deliveries for tens
 * of ms (the p99 at 10k threads); in slices the event loop serves sockets in between.
 */
export const TARGETS_PER_SLICE = 512;

const tickSlice = (
  ticker: Ticker,
  due: Array<[TickTarget, number]>,
  from: number,
  stride: number,
  phase: number,
) => {
  const to = Math.min(due.length, from + TARGETS_PER_SLICE);
  for (let index = from; index < to; index++) {
    const [target, serial] = due[index]!;
    // Stopped since the tick began (e.g. its stream closed while earlier slices ran).
    if (ticker.targets.has(target)) target.onTick(serial % stride === phase);
  }
  if (to < due.length) setImmediate(tickSlice, ticker, due, to, stride, phase);
};

const tickAll = (ticker: Ticker) => {
  ticker.ticks++;
  const stride = Math.max(1, Math.ceil(ticker.targets.size / VERIFICATIONS_PER_TICK));
  tickSlice(ticker, [...ticker.targets], 0, stride, ticker.ticks % stride);
};

/**
 * One interval timer per period for every subscriber (SSE pings, token expiry) instead of one
 * per subscriber: 10k open streams then hold no timer each. The timer exists only while someone
 * listens. Undo with `stopSharedTick` (same period and target).
 */
export function startSharedTick(intervalMs: number, target: TickTarget): void {
  let ticker = tickers.get(intervalMs);
  if (!ticker) {
    ticker = { targets: new Map(), timer: null, ticks: 0, nextSerial: 0 };
    tickers.set(intervalMs, ticker);
  }
  const active = ticker;
  active.targets.set(target, active.nextSerial++);
  if (active.timer === null) active.timer = setInterval(() => tickAll(active), intervalMs);
}

export function stopSharedTick(intervalMs: number, target: TickTarget): void {
  const ticker = tickers.get(intervalMs);
  if (!ticker?.targets.delete(target) || ticker.targets.size > 0) return;
  if (ticker.timer !== null) clearInterval(ticker.timer);
  ticker.timer = null;
  tickers.delete(intervalMs);
}
