/**
 * Incremental decoder of an HTTP/1.1 `Transfer-Encoding: chunked` body: feed the bytes as they
 * arrive, in any split, and get the payload pieces back.
 */
export class ChunkedDecoder {
  private state: "size" | "data" | "data-end" | "trailer" | "done" = "size";
  private sizeLine = "";
  private remaining = 0;
  private crlfSeen = 0;

  get finished(): boolean {
    return this.state === "done";
  }

  feed(bytes: Uint8Array): Uint8Array[] {
    const pieces: Uint8Array[] = [];
    let offset = 0;
    while (offset < bytes.length && this.state !== "done") {
      if (this.state === "size") {
        const newline = bytes.indexOf(10, offset);
        const end = newline === -1 ? bytes.length : newline;
        for (let index = offset; index < end; index++) this.sizeLine += String.fromCharCode(bytes[index]!);
        offset = end;
        if (newline === -1) break;
        offset = newline + 1;
        // Chunk extensions (`;name=value`) are allowed after the size.
        const size = Number.parseInt(this.sizeLine.trim().split(";")[0] ?? "", 16);
        this.sizeLine = "";
        if (!Number.isFinite(size)) throw new Error("malformed chunk size");
        if (size === 0) {
          this.state = "trailer";
          this.crlfSeen = 0;
        } else {
          this.remaining = size;
          this.state = "data";
        }
      } else if (this.state === "data") {
        const take = Math.min(this.remaining, bytes.length - offset);
        pieces.push(bytes.subarray(offset, offset + take));
        offset += take;
        this.remaining -= take;
        if (this.remaining === 0) {
          this.state = "data-end";
          this.crlfSeen = 0;
        }
      } else if (this.state === "data-end") {
        // The CRLF after a chunk's data.
        if (bytes[offset] === 10) this.state = "size";
        offset++;
      } else {
        // Trailer: done at the empty line (just CRLF) after the last chunk.
        const byte = bytes[offset++];
        if (byte === 10) {
          if (this.crlfSeen === 0) this.state = "done";
          this.crlfSeen = 0;
        } else if (byte !== 13) {
          this.crlfSeen = 1;
        }
      }
    }
    return pieces;
  }
}
