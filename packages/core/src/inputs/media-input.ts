import { lookup } from "node:dns/promises";
import type { InputDeclaration } from "@promptrun/contract";
import { fileTypeFromBuffer, supportedMimeTypes } from "file-type";
import { invalid } from "../errors.ts";
import { assertPublicUrl, type ResolveHost } from "../security/url-guard.ts";
import { decodePrefix, isBase64, isDataUrl, parseDataUrl } from "./data-url.ts";

/** What an `image` or `file` input accepts (docs/PRODUCT-RULES.md "Prompts and versions"). */
export const MEDIA_INPUT_RULE = "must be an https URL or a base64 data: URL";

/**
 * How much of a data URL is decoded to sniff its type: enough for every format file-type knows,
 * zip-based office files included (their entries come first). The rest is only pattern-checked,
 * so a payload is never decoded whole here, whatever the body limit.
 */
const SNIFF_BYTES = 1024 * 1024;

/** `type/subtype` */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/**
 * Create-time shape check of one image or file value, no I/O: an https URL without credentials,
 * or a base64 data URL declaring a media type (an image/* one for an image input). Returns the
 * problem (the message after `inputs.<name>`) or null.
 */
export function mediaInputProblem(value: string, type: "image" | "file"): string | null {
  if (isDataUrl(value)) {
    const dataUrl = parseDataUrl(value);
    if (!dataUrl) return MEDIA_INPUT_RULE;
    if (!MEDIA_TYPE.test(dataUrl.mediaType))
      return "is a data: URL without a valid media type (data:<type>/<subtype>;base64,…)";
    if (type === "image" && !dataUrl.mediaType.startsWith("image/"))
      return `is an image input, but its data: URL declares ${dataUrl.mediaType}`;
    if (!isBase64(dataUrl.base64)) return "is a data: URL whose payload is not valid base64";
    return null;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return MEDIA_INPUT_RULE;
  }
  if (url.protocol !== "https:" || url.hostname === "") return MEDIA_INPUT_RULE;
  if (url.username || url.password) return "must not carry credentials in its URL";
  return null;
}

/** Spellings of one type that file-type reports under another name. */
const SAME_TYPE: Record<string, string> = {
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "application/x-pdf": "application/pdf",
  "text/xml": "application/xml",
};
const canonicalType = (mediaType: string) => SAME_TYPE[mediaType] ?? mediaType;

/** Why the bytes contradict the declared type, or null when they agree. */
async function sniffProblem(
  declared: string,
  bytes: Uint8Array,
  type: "image" | "file",
): Promise<string | null> {
  const sniffed = (await fileTypeFromBuffer(bytes))?.mime;
  const expected = canonicalType(declared);
  if (sniffed === undefined) {
    // Text formats (plain, CSV, JSON, Markdown …) have no signature; a format file-type knows must show one.
    if (type === "image" || supportedMimeTypes.has(expected as never))
      return `declares ${declared}, but its bytes are not ${declared}`;
    return null;
  }
  if (canonicalType(sniffed) === expected) return null;
  // An XML dialect (image/svg+xml, application/rss+xml) sniffs as XML; an image must still be a raster image.
  if (sniffed === "application/xml" && expected.endsWith("+xml") && type === "file") return null;
  return `declares ${declared}, but its bytes are ${sniffed}`;
}

/** A create request waits at most this long for DNS; a slower answer counts as "does not resolve". */
const DEFAULT_DNS_TIMEOUT_MS = 5_000;

const systemResolve: ResolveHost = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** `resolve`, failing after `timeoutMs` (url-guard then refuses the host like one that does not resolve). */
const withTimeout =
  (resolve: ResolveHost, timeoutMs: number): ResolveHost =>
  (host) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`DNS lookup of ${host} timed out`)), timeoutMs);
    });
    return Promise.race([resolve(host), timeout]).finally(() => clearTimeout(timer));
  };

export interface MediaCheckOptions {
  /** PROMPTRUN_ALLOW_PRIVATE_URLS: when false, an https URL must resolve to public addresses only. */
  allowPrivateUrls: boolean;
  /** DNS for the private-address check; tests inject one. */
  resolve?: ResolveHost;
  /** How long to wait for DNS (default 5 s). */
  dnsTimeoutMs?: number;
}

/**
 * Create-time checks that need I/O, after mediaInputProblem passed: a data URL's bytes must be
 * what it declares (sniffed with file-type); an https URL's host must resolve to public addresses
 * unless private URLs are allowed — whoever would fetch it later, the provider or this server.
 */
export async function checkMediaInput(
  name: string,
  value: string,
  type: "image" | "file",
  options: MediaCheckOptions,
): Promise<void> {
  const dataUrl = isDataUrl(value) ? parseDataUrl(value) : null;
  if (dataUrl) {
    const problem = await sniffProblem(dataUrl.mediaType, decodePrefix(dataUrl.base64, SNIFF_BYTES), type);
    if (problem) throw invalid(`inputs.${name} ${problem}`);
    return;
  }
  if (!options.allowPrivateUrls)
    await assertPublicUrl(value, {
      allowPrivate: false,
      field: `inputs.${name}`,
      resolve: withTimeout(options.resolve ?? systemResolve, options.dnsTimeoutMs ?? DEFAULT_DNS_TIMEOUT_MS),
    });
}

/** checkMediaInput for every image and file input that has a value (defaults included). */
export async function checkMediaInputs(
  declarations: Record<string, InputDeclaration>,
  inputs: Record<string, unknown>,
  options: MediaCheckOptions,
): Promise<void> {
  for (const [name, declaration] of Object.entries(declarations)) {
    if (declaration.type !== "image" && declaration.type !== "file") continue;
    const value = Object.hasOwn(inputs, name) ? inputs[name] : undefined;
    if (typeof value === "string") await checkMediaInput(name, value, declaration.type, options);
  }
}
