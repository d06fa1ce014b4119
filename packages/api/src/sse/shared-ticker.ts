/** Something called on every tick of a shared interval; `verify` marks its turn for costly checks. */
export type TickListener = (verify: boolean) => void;

/** At most this many listeners per tick get `verify = true` (round robin over the others). */
export const VERIFICATIONS_PER_TICK = 64;

interface Ticker {
  listeners: Map<TickListener, number>;
  timer: ReturnType<typeof setInterval> | null;
  ticks: number;
  nextSerial: number;
}

const tickers = new Map<number, Ticker>();

const tickAll = (ticker: Ticker) => {
  ticker.ticks++;
  const stride = Math.max(1, Math.ceil(ticker.listeners.size / VERIFICATIONS_PER_TICK));
  const phase = ticker.ticks % stride;
  for (const [listener, serial] of [...ticker.listeners]) listener(serial % stride === phase);
};

/**
 * One interval timer per period for every subscriber (SSE pings, token expiry) instead of one
 * per subscriber: 10k open streams then hold no timer each. The timer exists only while someone
 * listens. Returns a function that stops listening.
 */
export function onSharedTick(intervalMs: number, listener: TickListener): () => void {
  let ticker = tickers.get(intervalMs);
  if (!ticker) {
    ticker = { listeners: new Map(), timer: null, ticks: 0, nextSerial: 0 };
    tickers.set(intervalMs, ticker);
  }
  const active = ticker;
  active.listeners.set(listener, active.nextSerial++);
  if (active.timer === null) active.timer = setInterval(() => tickAll(active), intervalMs);
  return () => {
    if (!active.listeners.delete(listener) || active.listeners.size > 0) return;
    if (active.timer !== null) clearInterval(active.timer);
    active.timer = null;
    tickers.delete(intervalMs);
  };
}
