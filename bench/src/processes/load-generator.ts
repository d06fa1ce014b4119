/**
 * Load generator in its own process (so it does not share an event loop with anything it
 * measures): `bun load-generator.ts '<HttpLoadOptions JSON>'` prints {"type":"result", …}.
 */
import { emit } from "../child-protocol.ts";
import { runHttpLoad } from "../http-load.ts";

const options = JSON.parse(process.argv[2] ?? "{}");
const result = await runHttpLoad(options);
emit({ type: "result", ...result });
