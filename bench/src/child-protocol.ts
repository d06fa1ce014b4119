/**
 * The child side of the bench's process protocol: one JSON message per line, each with a
 * `type`; the parent writes commands to stdin, the child reports on stdout.
 */
export interface Message {
  type: string;
}

export function emit<T extends Message>(message: T): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Commands from the parent, one per stdin line, until stdin closes. */
export async function* commands<T extends Message>(): AsyncGenerator<T> {
  for await (const line of console) {
    if (line.trim() !== "") yield JSON.parse(line) as T;
  }
}
