import { z } from "zod";

export const pageRequestSchema = z.object({
  cursor: z.string().max(200).nullish(),
  limit: z.number().int().min(1).max(200).default(50),
});
export type PageRequest = z.infer<typeof pageRequestSchema>;

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });
export type Page<T> = { items: T[]; nextCursor: string | null };
