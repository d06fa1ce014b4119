import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { invalid } from "../errors.ts";

const ipv4ToNumber = (ip: string): number => ip.split(".").reduce((sum, part) => sum * 256 + Number(part), 0);

const IPV4_PRIVATE_RANGES: Array<[string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["192.0.0.0", 24],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

const inIpv4Range = (ip: string, [base, bits]: [string, number]): boolean => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (ipv4ToNumber(ip) & mask) >>> 0 === (ipv4ToNumber(base) & mask) >>> 0;
};

/** Expands an IPv6 address to 8 numeric groups. */
const ipv6Groups = (ip: string): number[] => {
  let address = ip.toLowerCase().split("%")[0]!;
  // Embedded IPv4 tail (::ffff:1.2.3.4)
  const v4 = address.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    const n = ipv4ToNumber(v4[1]!);
    address = address.replace(v4[1]!, `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`);
  }
  const [head, tail] = address.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const missing = address.includes("::") ? 8 - headGroups.length - tailGroups.length : 0;
  return [...headGroups, ...Array(missing).fill("0"), ...tailGroups].map((group) =>
    Number.parseInt(group || "0", 16),
  );
};

/**
 * True for loopback, 0.0.0.0/8, RFC 1918, link-local, CGNAT, unique-local, multicast/reserved,
 * and IPv4-mapped/compatible IPv6 forms of these (docs/PRODUCT-RULES.md "Environments, env vars and webhooks").
 */
export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 4) return IPV4_PRIVATE_RANGES.some((range) => inIpv4Range(ip, range));
  if (isIP(ip) !== 6) return true; // not an address: refuse
  const groups = ipv6Groups(ip);
  const isZeroPrefix = groups.slice(0, 5).every((group) => group === 0);
  if (isZeroPrefix && (groups[5] === 0xffff || groups[5] === 0)) {
    // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible), including :: and ::1
    const ipv4 = [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
    return IPV4_PRIVATE_RANGES.some((range) => inIpv4Range(ipv4, range));
  }
  const first = groups[0]!;
  if ((first & 0xfe00) === 0xfc00) return true; // fc00::/7 unique-local
  if ((first & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((first & 0xff00) === 0xff00) return true; // multicast
  if (first === 0x2001 && groups[1] === 0x0db8) return true; // documentation
  if (first === 0x0064 && groups[1] === 0xff9b) return true; // NAT64 may embed private IPv4
  return false;
}

/** Resolves the URL's host and throws invalid when any address is private (unless allowed). */
export async function assertPublicUrl(
  rawUrl: string,
  options: { allowPrivate: boolean; field?: string },
): Promise<URL> {
  const field = options.field ?? "url";
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw invalid(`${field} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(`${field} must be an http(s) URL`);
  if (url.username || url.password) throw invalid(`${field} must not contain credentials`);
  if (options.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = isIP(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    throw invalid(`${field} host '${host}' does not resolve`);
  }
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) {
    throw invalid(`${field} resolves to a private or loopback address, which is not allowed`);
  }
  return url;
}

/**
 * A fetch that checks the resolved address of every request (and every redirect hop) before
 * connecting, for URLs that come from tenants. Redirects are followed manually so each hop is
 * checked.
 */
export function createGuardedFetch(options: {
  allowPrivate: boolean;
  fetch?: typeof fetch;
  maxRedirects?: number;
}): typeof fetch {
  const baseFetch = options.fetch ?? fetch;
  const maxRedirects = options.maxRedirects ?? 5;
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let request = input instanceof Request ? new Request(input, init) : new Request(input.toString(), init);
    for (let hop = 0; hop <= maxRedirects; hop++) {
      await assertPublicUrl(request.url, { allowPrivate: options.allowPrivate });
      const response = await baseFetch(request, { redirect: "manual" });
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) return response;
      request = new Request(new URL(location, request.url).toString(), {
        method: request.method === "POST" && response.status === 303 ? "GET" : request.method,
        headers: request.headers,
        signal: request.signal,
      });
    }
    throw invalid("too many redirects");
  };
  return guarded as typeof fetch;
}
