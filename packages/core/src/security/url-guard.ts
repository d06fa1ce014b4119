import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { invalid } from "../errors.ts";

/** A host name → every address it resolves to. Tests inject one; the default asks the system. */
export type ResolveHost = (host: string) => Promise<string[]>;

const systemResolve: ResolveHost = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** 2000::/3: the only IPv6 block handed out as global unicast. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * True for every address that is not plain public unicast: loopback, 0.0.0.0/8, RFC 1918,
 * link-local, CGNAT, benchmarking, documentation, reserved, multicast, unique-local, and the IPv6
 * forms that embed or translate an IPv4 address (mapped `::ffff:a.b.c.d` of a private one,
 * translated `::ffff:0:a.b.c.d`, compatible `::a.b.c.d`, NAT64, 6to4 `2002::/16`, Teredo
 * `2001::/32`). An allowlist over ipaddr.js's range table, so a range it names is refused by
 * default; anything that is not an address is refused too.
 */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.split("%")[0] ?? "";
  if (!isIP(bare)) return true;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(bare);
  } catch {
    return true;
  }
  if (address.kind() === "ipv6") {
    const v6 = address as ipaddr.IPv6;
    // A mapped address is an IPv4 one on the wire: judge the IPv4 address.
    if (v6.isIPv4MappedAddress()) return isPrivateAddress(v6.toIPv4Address().toString());
    return !v6.match(GLOBAL_UNICAST_V6) || v6.range() !== "unicast";
  }
  return address.range() !== "unicast";
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");

/** Parses a tenant URL: http(s) only, no credentials. */
const parseTenantUrl = (rawUrl: string, field: string): URL => {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw invalid(`${field} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(`${field} must be an http(s) URL`);
  if (url.username || url.password) throw invalid(`${field} must not contain credentials`);
  return url;
};

/**
 * Resolves the URL's host once and returns its addresses, all checked public. A host that does
 * not resolve and one that resolves to a private address get the same message, so the guard
 * tells a tenant nothing about the internal DNS.
 */
async function resolvePublicAddresses(url: URL, field: string, resolve: ResolveHost): Promise<string[]> {
  const host = hostOf(url);
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolve(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) {
    throw invalid(
      `${field} must resolve to a public address (private or loopback addresses and hosts that do not resolve are refused)`,
    );
  }
  return addresses;
}

/** Resolves the URL's host and throws invalid when any address is private (unless allowed). */
export async function assertPublicUrl(
  rawUrl: string,
  options: { allowPrivate: boolean; field?: string; resolve?: ResolveHost },
): Promise<URL> {
  const field = options.field ?? "url";
  const url = parseTenantUrl(rawUrl, field);
  if (!options.allowPrivate) await resolvePublicAddresses(url, field, options.resolve ?? systemResolve);
  return url;
}

/**
 * The request to send to `address` (already checked) instead of the URL's host name: the URL
 * names the IP, the `Host` header keeps the name, and TLS sends the name as SNI and checks the
 * certificate against it (Bun's fetch `tls.serverName`). No second DNS lookup happens, so a name
 * that re-resolves to another address (DNS rebinding) cannot move the connection.
 */
const pinnedRequest = async (
  request: Request,
  address: string,
): Promise<{ request: Request; init: RequestInit }> => {
  const url = new URL(request.url);
  const host = hostOf(url);
  if (isIP(host)) return { request, init: {} };
  const pinnedUrl = new URL(url);
  pinnedUrl.hostname = isIP(address) === 6 ? `[${address}]` : address;
  const headers = new Headers(request.headers);
  headers.set("host", url.host);
  // Bodies here are small JSON (webhooks, provider requests): buffered, they keep a Content-Length.
  const body = request.body ? await request.arrayBuffer() : null;
  const pinned = new Request(pinnedUrl.toString(), {
    method: request.method,
    headers,
    body,
    signal: request.signal,
    redirect: "manual",
  });
  const init = url.protocol === "https:" ? ({ tls: { serverName: host } } as RequestInit) : {};
  return { request: pinned, init };
};

/** Sends `request` to `address` without resolving its host name again (see pinnedRequest). */
export async function fetchPinned(
  request: Request,
  address: string,
  transport: typeof fetch = fetch,
): Promise<Response> {
  const pinned = await pinnedRequest(request, address);
  return transport(pinned.request, { ...pinned.init, redirect: "manual" });
}

/**
 * Headers a redirect may carry to another origin. Any other header may hold a credential (a
 * provider's `Authorization`, `x-api-key`, `api-key`, …), so, like browsers with `Authorization`
 * but for all of them, a hop to another scheme, host or port drops it (docs/SECURITY.md).
 */
const CROSS_ORIGIN_HEADERS = new Set([
  "accept",
  "accept-encoding",
  "accept-language",
  "content-type",
  "user-agent",
]);
/** Dropped with the body when a redirect turns the request into a GET. */
const BODY_HEADERS = [
  "content-type",
  "content-length",
  "content-encoding",
  "content-language",
  "content-location",
];

/**
 * The request for a redirect's next hop, as the Fetch standard follows one: 303 (and 301/302 of a
 * POST) becomes a GET without its body; 307 and 308 repeat the method and the body; another
 * origin gets only CROSS_ORIGIN_HEADERS.
 */
function redirectedRequest(
  request: Request,
  body: ArrayBuffer | null,
  status: number,
  location: string,
): Request {
  const target = new URL(location, request.url);
  const becomesGet =
    (status === 303 && request.method !== "GET" && request.method !== "HEAD") ||
    ((status === 301 || status === 302) && request.method === "POST");
  const headers = new Headers(request.headers);
  if (becomesGet) for (const name of BODY_HEADERS) headers.delete(name);
  if (target.origin !== new URL(request.url).origin) {
    for (const name of [...headers.keys()]) if (!CROSS_ORIGIN_HEADERS.has(name)) headers.delete(name);
  }
  return new Request(target.toString(), {
    method: becomesGet ? "GET" : request.method,
    headers,
    body: becomesGet ? null : body,
    signal: request.signal,
  });
}

/**
 * The one fetch for URLs that come from tenants (webhooks, provider base URLs in environment or
 * run env vars): each request and each redirect hop resolves the host once, refuses it when any
 * address is private, and connects to the checked address (pinned, see pinnedRequest). Redirects
 * are followed by hand so each hop is checked, with the Fetch standard's method and body rules and
 * no credential header sent to another origin (redirectedRequest). With `allowPrivate` it is a plain fetch that still
 * checks scheme and credentials. It wraps `fetch` (a transport, e.g. one that caps body sizes)
 * and returns a fetch, so it composes with other wrappers.
 */
export function createGuardedFetch(options: {
  allowPrivate: boolean;
  fetch?: typeof fetch;
  maxRedirects?: number;
  resolve?: ResolveHost;
}): typeof fetch {
  const baseFetch = options.fetch ?? fetch;
  const maxRedirects = options.maxRedirects ?? 5;
  const resolve = options.resolve ?? systemResolve;
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let request = input instanceof Request ? new Request(input, init) : new Request(input.toString(), init);
    // Read once, so a 307 or 308 can send it again (provider and tool bodies are small JSON).
    const body = request.body === null ? null : await request.arrayBuffer();
    if (body !== null) {
      request = new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body,
        signal: request.signal,
      });
    }
    for (let hop = 0; hop <= maxRedirects; hop++) {
      const url = parseTenantUrl(request.url, "url");
      let response: Response;
      if (options.allowPrivate) {
        response = await baseFetch(request, { redirect: "manual" });
      } else {
        const [address] = await resolvePublicAddresses(url, "url", resolve);
        response = await fetchPinned(request, address as string, baseFetch);
      }
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) return response;
      await response.body?.cancel().catch(() => undefined);
      request = redirectedRequest(request, body, response.status, location);
    }
    throw invalid("too many redirects");
  };
  return guarded as typeof fetch;
}
