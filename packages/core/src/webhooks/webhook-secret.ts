import { randomBytes } from "node:crypto";

/** A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export const generateWebhookSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;
