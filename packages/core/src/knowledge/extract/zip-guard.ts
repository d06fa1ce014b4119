/**
 * Measures what a zip really expands to before any library unpacks it (a zip bomb is a small
 * file that expands to gigabytes). It walks the central directory (what mammoth's zip reader
 * uses) and inflates every entry in small slices, counting the bytes and keeping none, so it stops
 * as soon as the total passes the cap: memory stays bounded whatever the declared sizes say.
 */
import { Inflate } from "fflate";
import { ExtractionError } from "../ports.ts";

export interface ZipEntryInfo {
  name: string;
  /** Bytes it really expands to. */
  size: number;
}

/** Compressed bytes pushed into the inflater at once: ≤ ~1032× that comes out per push. */
const SLICE = 8 * 1024;
/** Inflating is synchronous: let the event loop run (lease renewals, HTTP) after this much output. */
const PAUSE_EVERY_BYTES = 8 * 1024 * 1024;
const pause = () => new Promise<void>((resolve) => setImmediate(resolve));
const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const notZip = (why: string) =>
  new ExtractionError(`not a Word document: the zip archive is damaged (${why})`);

function findEndOfCentralDirectory(view: DataView): number {
  // The record is 22 bytes plus a comment of at most 65535.
  const earliest = Math.max(0, view.byteLength - 22 - 0xffff);
  for (let at = view.byteLength - 22; at >= earliest; at--) {
    if (view.getUint32(at, true) === EOCD_SIGNATURE) return at;
  }
  throw notZip("no end of central directory");
}

interface CentralEntry {
  name: string;
  method: number;
  compressedSize: number;
  localOffset: number;
}

function readCentralDirectory(data: Uint8Array): CentralEntry[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const end = findEndOfCentralDirectory(view);
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const entries: CentralEntry[] = [];
  const decoder = new TextDecoder();
  for (let index = 0; index < count; index++) {
    if (at + 46 > data.length || view.getUint32(at, true) !== CENTRAL_SIGNATURE)
      throw notZip("bad central directory");
    const compressedSize = view.getUint32(at + 20, true);
    const localOffset = view.getUint32(at + 42, true);
    if (compressedSize === 0xffffffff || localOffset === 0xffffffff) throw notZip("zip64 is not supported");
    const nameLength = view.getUint16(at + 28, true);
    const skip = nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    entries.push({
      name: decoder.decode(data.subarray(at + 46, at + 46 + nameLength)),
      method: view.getUint16(at + 10, true),
      compressedSize,
      localOffset,
    });
    at += 46 + skip;
  }
  return entries;
}

function entryData(data: Uint8Array, entry: CentralEntry): Uint8Array {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const at = entry.localOffset;
  if (at + 30 > data.length || view.getUint32(at, true) !== LOCAL_SIGNATURE) throw notZip("bad local header");
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  if (start + entry.compressedSize > data.length) throw notZip("entry past the end of the file");
  return data.subarray(start, start + entry.compressedSize);
}

/** Inflates one entry, counting; throws `overCap()` once `budget` bytes are passed. */
async function inflatedSize(compressed: Uint8Array, budget: number, overCap: () => Error): Promise<number> {
  let size = 0;
  let sincePause = 0;
  const inflate = new Inflate((chunk) => {
    size += chunk.length;
  });
  try {
    for (let at = 0; at < compressed.length; at += SLICE) {
      inflate.push(compressed.subarray(at, at + SLICE), at + SLICE >= compressed.length);
      if (size > budget) throw overCap();
      if (size - sincePause > PAUSE_EVERY_BYTES) {
        sincePause = size;
        await pause();
      }
    }
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    throw notZip(`an entry does not inflate: ${error instanceof Error ? error.message : String(error)}`);
  }
  return size;
}

/**
 * The zip's entries with their real sizes; ExtractionError when it is not a readable zip or
 * expands to more than `maxBytes` in total (counted as it inflates, never past the cap by more
 * than one slice's worth).
 */
export async function measureZip(
  data: Uint8Array,
  maxBytes: number,
  overCap: () => Error,
): Promise<ZipEntryInfo[]> {
  if (data.length < 22) throw notZip("too short");
  const entries = readCentralDirectory(data);
  const measured: ZipEntryInfo[] = [];
  let total = 0;
  for (const entry of entries) {
    const compressed = entryData(data, entry);
    let size: number;
    if (entry.method === 0) size = compressed.length;
    else if (entry.method === 8) size = await inflatedSize(compressed, maxBytes - total, overCap);
    else throw notZip(`compression method ${entry.method} is not supported`);
    total += size;
    if (total > maxBytes) throw overCap();
    measured.push({ name: entry.name, size });
  }
  return measured;
}
