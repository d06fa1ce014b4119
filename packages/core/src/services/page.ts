import type { PageInput } from "../services.ts";

export const MAX_PAGE_LIMIT = 200;

/** Transports validate page input; the services still keep the limit sane (1–200, default 50). */
export const clampPage = (page: PageInput): { cursor: string | null; limit: number } => ({
  cursor: page.cursor ?? null,
  limit: Math.min(MAX_PAGE_LIMIT, Math.max(1, Math.floor(page.limit) || 50)),
});
