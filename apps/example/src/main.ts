/** `bun run example`: the example chat app against a running Promptrun (PROMPTRUN_URL, PROMPTRUN_API_KEY). */
import { readExampleEnv } from "./env.ts";
import { startExampleServer } from "./example-server.ts";

/** Ends the process with a code (named so it reads as what it is). */
const exitProcess: (code?: number) => never = process.exit.bind(process);

try {
  const env = readExampleEnv(process.env);
  const server = startExampleServer({
    promptrunUrl: env.promptrunUrl,
    apiKey: env.apiKey,
    prompt: env.prompt,
    hostname: env.host,
    port: env.port,
    development: process.argv.includes("--development"),
  });
  console.log(
    `example chat app on ${server.url} (Promptrun at ${env.promptrunUrl}, prompt ${env.prompt.slug})`,
  );
  const stop = () => void server.stop().then(() => exitProcess(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  exitProcess(1);
}
