import { createLogger } from "../logger.ts";
import { startServer } from "../server.ts";
import { type CommandContext, exitProcess } from "./command.ts";

/** How to try the demo tenant, shown once on stderr when serve created it. */
function demoBanner(
  url: string,
  demo: { apiKey: string; prompts: Array<{ slug: string; version: number }> },
  consoleOn: boolean,
) {
  return [
    "",
    "  Promptrun is running with a demo tenant. Its API key is shown only this once:",
    "",
    `    export PROMPTRUN_API_KEY=${demo.apiKey}`,
    "",
    `  Prompts: ${demo.prompts.map((prompt) => `${prompt.slug}@${prompt.version}`).join(", ")}`,
    `  Try:  curl -s -X POST ${url}/api/v1/prompts/greet/latest/runs \\`,
    `          -H "Authorization: Bearer $PROMPTRUN_API_KEY" -H "Content-Type: application/json" \\`,
    `          -d '{"inputs":{"name":"Ada"}}'`,
    `  API reference: ${url}/docs`,
    ...(consoleOn ? [`  Console: ${url}/console (sign in with the key above)`] : []),
    "",
  ].join("\n");
}

/** `serve`: starts the server; the first SIGTERM/SIGINT drains in-flight runs, a second forces. */
export async function serve({ config, flags }: CommandContext): Promise<void> {
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, logger);
  if (server.demo) process.stderr.write(`${demoBanner(server.url, server.demo, config.console !== null)}\n`);
  if (flags.json) process.stdout.write(`${JSON.stringify({ url: server.url, demo: server.demo })}\n`);
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) exitProcess(130);
    logger.info({ signal }, "shutting down: finishing in-flight runs (send again to force)");
    server.stop({ graceMs: 10_000 }).then(
      () => exitProcess(0),
      (error: unknown) => {
        logger.error({ err: String(error) }, "shutdown failed");
        exitProcess(1);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}
