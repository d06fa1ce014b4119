/**
 * Tokens that carry the moment the upstream sent them (`@<wall-clock ms> `), so any reader
 * downstream — Promptrun's SSE, Portkey, the raw upstream — measures delivery latency per token.
 */
export const stampToken = (sentAtMs: number): string => `@${sentAtMs.toFixed(3)} `;

/** The send time carried by a token, or null when it is not a stamped token. */
export function stampOf(delta: string): number | null {
  if (!delta.startsWith("@")) return null;
  const value = Number.parseFloat(delta.slice(1));
  return Number.isFinite(value) ? value : null;
}

export type UpstreamBehaviour =
  | { kind: "stamp"; tokens: number; intervalMs: number }
  /** Held until the upstream's gate opens, then one token: parks a run's execution slot. */
  | { kind: "gate" };

/** `stamp-200-5` → 200 stamped tokens, 5 ms apart; `gate` → held until released. */
export function parseUpstreamModel(model: string): UpstreamBehaviour | null {
  if (model === "gate") return { kind: "gate" };
  const match = /^stamp-(\d+)-(\d+(?:\.\d+)?)$/.exec(model);
  if (!match) return null;
  return { kind: "stamp", tokens: Number(match[1]), intervalMs: Number(match[2]) };
}
