/**
 * Runs `callback` before the next paint: `requestAnimationFrame` in a browser, a 16 ms timer
 * where there is none (server rendering, workers, some test DOMs). Returns a cancel function.
 */
export function onNextFrame(callback: () => void): () => void {
  if (typeof globalThis.requestAnimationFrame === "function") {
    const id = globalThis.requestAnimationFrame(() => callback());
    return () => globalThis.cancelAnimationFrame(id);
  }
  const timer = setTimeout(callback, 16);
  return () => clearTimeout(timer);
}
