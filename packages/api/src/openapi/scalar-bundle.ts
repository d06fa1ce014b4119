import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/** The standalone browser bundle inside @scalar/api-reference (not in its exports map, so found beside its entry). */
export function scalarBundlePath(): string {
  const entry = import.meta.resolve("@scalar/api-reference");
  return fileURLToPath(new URL("./browser/standalone.js", entry));
}

interface LoadedBundle {
  plain: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
}

/** Serves the bundle (~4 MB, ~1 MB gzipped) from memory after the first request. */
export function createScalarBundleHandler(
  path: string = scalarBundlePath(),
): (request: Request) => Promise<Response> {
  let loading: Promise<LoadedBundle> | null = null;
  const load = async (): Promise<LoadedBundle> => {
    const plain = new Uint8Array(await readFile(path));
    return { plain, gzip: new Uint8Array(gzipSync(plain)) };
  };
  return async (request) => {
    loading ??= load().catch((error: unknown) => {
      loading = null;
      throw error;
    });
    const bundle = await loading;
    const acceptsGzip = /\bgzip\b/i.test(request.headers.get("accept-encoding") ?? "");
    const headers: Record<string, string> = {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=86400",
      vary: "accept-encoding",
    };
    if (acceptsGzip) headers["content-encoding"] = "gzip";
    // A Blob keeps this valid under both the Bun and the DOM lib typings (browser code imports AppRouter's types).
    return new Response(new Blob([acceptsGzip ? bundle.gzip : bundle.plain]), { headers });
  };
}
