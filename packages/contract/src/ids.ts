import { z } from "zod";

/** Any RFC 4122-shaped UUID (versions 1–8); the contract only says "uuid". */
export const uuidSchema = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID");

export const isUuid = (value: string): boolean => uuidSchema.safeParse(value).success;

/** Prompt handle: `[a-z0-9][a-z0-9-_.]{0,99}`. */
export const slugSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9\-_.]{0,99}$/, "must match [a-z0-9][a-z0-9-_.]{0,99}");

export const tagSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9\-_.]*$/,
    "must start with a letter or digit and use letters, digits, -, _ or .",
  )
  .refine((tag) => tag !== "latest" && !/^[1-9][0-9]*$/.test(tag), "cannot be 'latest' or a version number");

export const channelSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9\-_.:]*$/, "must use letters, digits, -, _, . or :");

export const environmentNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9\-_]*$/, "must match [a-z0-9][a-z0-9-_]*");
