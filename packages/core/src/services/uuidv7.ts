/**
 * UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then random bits. Time-ordered ids keep SQLite
 * B-tree inserts local (STACK-NOTES). Within one millisecond the 12-bit `rand_a` field is a
 * counter started at a random value, so ids made by this process sort in creation order; when it
 * overflows, the timestamp borrows the next millisecond. Free of `bun:*` (core runs anywhere).
 */
let lastMilliseconds = 0;
let sequence = 0;
/** Two hex digits per byte value: formatting is on every create's path. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

export function uuidv7(nowMilliseconds: number = Date.now()): string {
  const random = new Uint8Array(10);
  crypto.getRandomValues(random);
  if (nowMilliseconds > lastMilliseconds) {
    lastMilliseconds = nowMilliseconds;
    // Start low in the range so a burst within one millisecond rarely overflows.
    sequence = ((random[0]! << 8) | random[1]!) & 0x7ff;
  } else {
    sequence++;
    if (sequence > 0xfff) {
      lastMilliseconds++;
      sequence = 0;
    }
  }
  const bytes = new Uint8Array(16);
  let time = lastMilliseconds;
  for (let index = 5; index >= 0; index--) {
    bytes[index] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (random[2]! & 0x3f);
  bytes.set(random.subarray(3, 10), 9);
  let id = "";
  for (let index = 0; index < 16; index++) {
    if (index === 4 || index === 6 || index === 8 || index === 10) id += "-";
    id += HEX[bytes[index]!]!;
  }
  return id;
}

/** The creation time encoded in a UUIDv7. */
export function uuidv7Time(id: string): Date {
  return new Date(Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16));
}
