/**
 * The fake OpenAI-compatible upstream in its own process (see ../stamped-upstream.ts).
 * Prints {"type":"ready","url"}; POST <url>/control/open-gate releases gated requests.
 */
import { emit } from "../child-protocol.ts";
import { startStampedUpstream } from "../stamped-upstream.ts";

/** Ends the process with a code. */
const exitProcess: (code?: number) => never = process.exit.bind(process);

const upstream = startStampedUpstream();
emit({ type: "ready", url: upstream.url });
process.on("SIGTERM", () => {
  upstream.stop().finally(() => exitProcess(0));
});
