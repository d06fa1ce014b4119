import type { ReactNode } from "react";

/**
 * A wide table that scrolls sideways on a narrow screen: focusable and named, so a keyboard user
 * can reach it and scroll it (axe `scrollable-region-focusable`).
 */
export function ScrollRegion({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to be scrolled by keyboard.
    <section className="table-scroll scroll-region" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
