/**
 * Minimal incremental Server-Sent Events parser (event + data fields; comments and ids skipped):
 * enough for a subscriber that must stay cheap at 10k connections per process.
 */
export class SseTextParser {
  private buffer = "";
  private eventName = "";
  private data: string[] = [];

  constructor(private readonly onEvent: (event: string, data: string) => void) {}

  feed(text: string): void {
    this.buffer += text;
    let start = 0;
    for (
      let newline = this.buffer.indexOf("\n", start);
      newline !== -1;
      newline = this.buffer.indexOf("\n", start)
    ) {
      let line = this.buffer.slice(start, newline);
      start = newline + 1;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        if (this.data.length > 0) this.onEvent(this.eventName || "message", this.data.join("\n"));
        this.eventName = "";
        this.data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") this.eventName = value;
      else if (field === "data") this.data.push(value);
    }
    this.buffer = this.buffer.slice(start);
  }
}
