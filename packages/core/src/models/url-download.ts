import { PromptrunError } from "../errors.ts";
import { createGuardedFetch } from "../security/url-guard.ts";

/**
 * An image or file URL the provider cannot fetch itself is downloaded by the server: at most
 * this many bytes (docs/providers.md "Files and images")…
 */
export const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;
/** …within this long (connect, redirects and body). */
export const DOWNLOAD_TIMEOUT_MS = 30_000;

export interface DownloadedFile {
  data: Uint8Array;
  /** The response's Content-Type (parameters dropped), or undefined when it sent none. */
  mediaType: string | undefined;
}

export type UrlDownloader = (url: URL, signal: AbortSignal) => Promise<DownloadedFile>;

/** A download failure that a later attempt may not repeat (a 5xx, 429, timeout, cut connection). */
export class TransientDownloadError extends Error {
  override name = "TransientDownloadError";
}

const refuse = (host: string, why: string) =>
  new PromptrunError("invalid", `could not download the file at ${host}: ${why}`);

async function readCapped(response: Response, host: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > MAX_DOWNLOAD_BYTES) {
    await response.body?.cancel().catch(() => {});
    throw refuse(host, `larger than ${MAX_DOWNLOAD_BYTES} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_DOWNLOAD_BYTES) {
      await reader.cancel().catch(() => {});
      throw refuse(host, `larger than ${MAX_DOWNLOAD_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Downloads through the tenant-URL guard (private ranges refused at connect time unless allowed),
 * with no credentials of the server's (a bare GET, no cookies), a size cap and a timeout.
 */
export function createUrlDownloader(options: { allowPrivate: boolean; fetch?: typeof fetch }): UrlDownloader {
  const guarded = createGuardedFetch({ allowPrivate: options.allowPrivate, fetch: options.fetch });
  return async (url, signal) => {
    const host = url.host;
    const timeout = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
    const both = AbortSignal.any([signal, timeout]);
    try {
      const response = await guarded(url.toString(), { method: "GET", signal: both, credentials: "omit" });
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        const why = `it answered ${response.status}`;
        if (response.status >= 500 || response.status === 429 || response.status === 408)
          throw new TransientDownloadError(`could not download the file at ${host}: ${why}`);
        throw refuse(host, why);
      }
      const data = await readCapped(response, host);
      const mediaType =
        response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() || undefined;
      return { data, mediaType };
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      if (PromptrunError.isInstance(error)) {
        if (error.code === "invalid" && error.message.startsWith("could not download")) throw error;
        throw refuse(host, error.message);
      }
      if (error instanceof TransientDownloadError) throw error;
      if (timeout.aborted)
        throw new TransientDownloadError(`could not download the file at ${host}: timed out`);
      const why = error instanceof Error ? error.message : String(error);
      throw new TransientDownloadError(`could not download the file at ${host}: ${why}`);
    }
  };
}
