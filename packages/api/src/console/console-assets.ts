import { readFile, realpath, stat } from "node:fs/promises";
import { basename, join, resolve, sep } from "node:path";
import { contentType } from "mime-types";
import { errorResponse } from "../errors.ts";
import { jsonResponse } from "../http/json-response.ts";

/** Vite names these by their content hash: a new build gets new names. */
const IMMUTABLE = "public, max-age=31536000, immutable";
/** index.html and the unhashed files: always asked again (a 304 when unchanged). */
const REVALIDATE = "no-cache";

const NOT_BUILT = "the console is not built: run bun run console:build";

/** The path segments under /console, decoded; null when one could leave the directory or is not a name. */
function segmentsOf(path: string): string[] | null {
  const segments: string[] = [];
  for (const raw of path.slice("/console".length).split("/")) {
    if (raw === "") continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (segment === "." || segment === ".." || /[/\\\0]/.test(segment)) return null;
    segments.push(segment);
  }
  return segments;
}

/** The file's real path when it is a regular file inside `root` (symbolic links followed), else null. */
async function fileInside(root: string, candidate: string): Promise<string | null> {
  try {
    const real = await realpath(candidate);
    if (!real.startsWith(root + sep)) return null;
    return (await stat(real)).isFile() ? real : null;
  } catch {
    return null;
  }
}

async function fileResponse(request: Request, file: string, cacheControl: string): Promise<Response> {
  const info = await stat(file);
  const etag = `W/"${info.size.toString(36)}-${Math.trunc(info.mtimeMs).toString(36)}"`;
  const headers: Record<string, string> = {
    "content-type": contentType(basename(file)) || "application/octet-stream",
    "cache-control": cacheControl,
    etag,
  };
  if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
  // A Blob keeps this valid under both the Bun and the DOM lib typings.
  return new Response(new Blob([new Uint8Array(await readFile(file))]), { headers });
}

/**
 * GET /console and everything under it: the built single-page app from `distDir`
 * (docs/console.md "Serving and sign-in"). A file that exists is served; a missing one under
 * assets/ is 404; any other path is a route of the app and gets index.html (a path without an
 * extension, and also one whose last segment has a dot, like a prompt slug `support.reply`).
 * Nothing outside the directory is ever read: `.`/`..` segments, encoded slashes and backslashes
 * are refused, and the resolved file (links followed) must lie inside it. No build: 503.
 */
export function createConsoleAssetsHandler(
  distDir: string,
): (request: Request, path: string) => Promise<Response> {
  const root = resolve(distDir);
  return async (request, path) => {
    // Looked up on each request: a build made while the server runs is served at once.
    const realRoot = await realpath(root).catch(() => null);
    const index = realRoot === null ? null : await fileInside(realRoot, join(realRoot, "index.html"));
    if (realRoot === null || index === null) {
      return jsonResponse(503, { error: NOT_BUILT, code: "unavailable" }, { "retry-after": "60" });
    }
    const segments = segmentsOf(path);
    if (segments === null) return errorResponse("not_found", "no such file in the console");
    if (segments.length === 0) return fileResponse(request, index, REVALIDATE);
    const inAssets = segments[0] === "assets";
    const file = await fileInside(realRoot, resolve(realRoot, ...segments));
    if (file !== null)
      return fileResponse(request, file, inAssets && segments.length > 1 ? IMMUTABLE : REVALIDATE);
    if (inAssets) return errorResponse("not_found", "no such file in the console");
    return fileResponse(request, index, REVALIDATE);
  };
}
