/**
 * `data:` URLs of image and file inputs (RFC 2397, base64 only): parsed without decoding the
 * payload, which is checked in one linear pass and decoded only as far as sniffing needs.
 */

export interface DataUrl {
  /** Lower case, without parameters, e.g. `image/png`; "" when the URL declares none. */
  mediaType: string;
  /** The base64 text after `;base64,`. */
  base64: string;
}

export const isDataUrl = (value: string): boolean => /^data:/i.test(value);

/**
 * The parts of a base64 data URL (`data:[<type/subtype>][;param=value]*;base64,<payload>`), or
 * null when it is not one. Found with indexOf, not a pattern: a hostile header of a million
 * `;` costs one scan.
 */
export function parseDataUrl(value: string): DataUrl | null {
  if (!isDataUrl(value)) return null;
  const comma = value.indexOf(",");
  if (comma < 0) return null;
  const header = value.slice("data:".length, comma);
  if (!/;base64$/i.test(header)) return null;
  const semicolon = header.indexOf(";");
  return {
    mediaType: header.slice(0, semicolon).trim().toLowerCase(),
    base64: value.slice(comma + 1),
  };
}

/** A–Z, a–z, 0–9, `+`, `/` */
const isBase64Char = (code: number) =>
  (code >= 65 && code <= 90) ||
  (code >= 97 && code <= 122) ||
  (code >= 48 && code <= 57) ||
  code === 43 ||
  code === 47;

/** Standard base64 with its padding (what FileReader.readAsDataURL and Buffer write), not empty. */
export function isBase64(text: string): boolean {
  if (text.length === 0 || text.length % 4 !== 0) return false;
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const end = text.length - padding;
  for (let index = 0; index < end; index++) if (!isBase64Char(text.charCodeAt(index))) return false;
  return true;
}

/** The first `maxBytes` (rounded up to a 3-byte group) of the payload, decoded. */
export function decodePrefix(base64: string, maxBytes: number): Uint8Array {
  const chars = Math.ceil(maxBytes / 3) * 4;
  return Buffer.from(base64.length > chars ? base64.slice(0, chars) : base64, "base64");
}
