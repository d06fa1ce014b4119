import { isUuid } from "@promptrun/contract";
import {
  PromptrunError,
  StreamAccessError,
  type StreamTokenClaims,
  type StreamTokenService,
  unauthorized,
} from "@promptrun/core";

const INVALID = "invalid or expired stream token";

function payloadOf(token: string): Record<string, unknown> | null {
  const segment = token.split(".")[1];
  if (segment === undefined) return null;
  try {
    const payload: unknown = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
    return typeof payload === "object" && payload !== null ? (payload as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Claims of a stream token whose thread the caller does not name (`run.get` by run id).
 * `verify` wants the thread, so the unverified payload only suggests candidates (the `thread`
 * claim first); `verify` then checks signature, expiry and that thread. Nothing is trusted
 * before it passes.
 */
export async function verifyStreamTokenOfAnyThread(
  streamTokens: StreamTokenService,
  token: string,
): Promise<StreamTokenClaims> {
  const payload = payloadOf(token);
  if (payload === null) throw unauthorized(INVALID);
  const { thread, ...others } = payload;
  const candidates = [thread, ...Object.values(others)]
    .filter((value): value is string => typeof value === "string" && isUuid(value))
    .slice(0, 4);
  for (const candidate of candidates) {
    try {
      return await streamTokens.verify(token, candidate);
    } catch (error) {
      // forbidden = valid token, other thread: try the next candidate. Anything else (a lost
      // tenant subscription included) is final.
      if (
        !(PromptrunError.isInstance(error) && error.code === "forbidden") ||
        error instanceof StreamAccessError
      )
        throw error;
    }
  }
  throw unauthorized(INVALID);
}
