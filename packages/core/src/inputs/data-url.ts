/**
 * `data:` URLs of image and file inputs (RFC 2397, base64 only): parsed without decoding the
 * payload, which is checked by a linear pattern and decoded only as far as sniffing needs.
 */

export interface DataUrl {
  /** Lower case, without parameters, e.g. `image/png`; "" when the URL declares none. */
  mediaType: string;
  /** The base64 text after `;base64,`. */
  base64: string;
}

/** `data:[<type/subtype>][;param=value]*;base64,<payload>`; the media type is checked apart. */
const DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*);base64,/i;
/** Standard base64 with its padding (what FileReader.readAsDataURL and Buffer write). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const isDataUrl = (value: string): boolean => /^data:/i.test(value);

/** The parts of a base64 data URL, or null when it is not one (no `;base64,`). */
export function parseDataUrl(value: string): DataUrl | null {
  const match = DATA_URL.exec(value);
  if (!match) return null;
  return { mediaType: (match[1] ?? "").trim().toLowerCase(), base64: value.slice(match[0].length) };
}

export const isBase64 = (text: string): boolean => text.length > 0 && BASE64.test(text);

/** The first `maxBytes` (rounded up to a 3-byte group) of the payload, decoded. */
export function decodePrefix(base64: string, maxBytes: number): Uint8Array {
  const chars = Math.ceil(maxBytes / 3) * 4;
  return Buffer.from(base64.length > chars ? base64.slice(0, chars) : base64, "base64");
}
