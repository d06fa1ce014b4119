import type { Logger } from "@promptrun/api";
import pino from "pino";

/** JSON logs on stdout; secrets are redacted wherever they appear in a logged object. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "promptrun" },
    redact: {
      paths: [
        "apiKey",
        "token",
        "secret",
        "envVars",
        "authorization",
        "*.apiKey",
        "*.token",
        "*.secret",
        "*.envVars",
        "*.authorization",
        "headers.authorization",
        "*.headers.authorization",
        "headers.cookie",
        "*.headers.cookie",
      ],
      censor: "[redacted]",
    },
  });
}
