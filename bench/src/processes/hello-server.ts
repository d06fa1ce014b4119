/**
 * The ceiling: a bare Bun.serve JSON hello-world, in its own process like the server under test.
 * Prints {"type":"ready","url"} when listening; stops on SIGTERM.
 */
import { emit } from "../child-protocol.ts";

/** Ends the process with a code. */
const exitProcess: (code?: number) => never = process.exit.bind(process);

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => Response.json({ hello: "world" }),
});
emit({ type: "ready", url: `http://127.0.0.1:${server.port}`, pid: process.pid });
process.on("SIGTERM", () => {
  server.stop(true);
  exitProcess(0);
});
