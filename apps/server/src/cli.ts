#!/usr/bin/env bun
/**
 * `bun run promptrun <command>`: serve, migrate, and operator commands (docs/PRODUCT-RULES.md "Configuration and CLI").
 * Every command accepts --json and then prints exactly one JSON document on stdout.
 * The commands live in cli/, one file per group; main() dispatches through COMMANDS.
 */
import { parseArgs } from "node:util";
import { PromptrunError } from "@promptrun/core";
import { type Command, type CommandTable, exitProcess, UsageError } from "./cli/command.ts";
import { databaseCommands } from "./cli/database.ts";
import { envCommands } from "./cli/envs.ts";
import { knowledgeBaseCommands } from "./cli/knowledge-bases.ts";
import { promptCommands } from "./cli/prompts.ts";
import { serve } from "./cli/serve.ts";
import { keyCommands, tenantCommands } from "./cli/tenants.ts";
import { webhookCommands } from "./cli/webhooks.ts";
import { workflowCommands } from "./cli/workflows.ts";
import { ConfigurationError, readProcessEnvironment } from "./env.ts";

const USAGE = `Usage: promptrun <command> [--json]

  serve                                         start the server (migrates first)
  migrate                                       apply database migrations
  tenants create <name> [--inactive]            create a tenant and its first API key
  tenants list                                  list tenants
  tenants subscription <tenantId> active|inactive
  keys create <tenantId>                        create an API key (shown once)
  keys revoke <apiKey-or-prefix>
  prompts push <file-or-dir> --tenant <id>      push prompt files (YAML or JSON)
  prompts tag <slug> <version> <tag> --tenant <id>
  workflows push <file-or-dir> --tenant <id>    push workflow files (YAML or JSON)
  workflows tag <slug> <version> <tag> --tenant <id>
  workflows list --tenant <id>
  envs set <tenantId> <environment> KEY=VALUE…  set env vars (creates the environment)
  envs list <tenantId>
  webhooks add <tenantId> <environment> <url> [--events run.completed,run.failed]
  webhooks list <tenantId>
  webhooks attempts <tenantId> [--webhook <id>] [--run <id>]
  webhooks redeliver <tenantId> <deliveryId>
  kb create <slug> --tenant <id> [--embedding-model provider:model]
            [--max-tokens n [--overlap n]] [--description text]
  kb list --tenant <id>
  kb add <slug> <files…> --tenant <id> [--metadata json] [--external-id id]
  kb search <slug> <query> --tenant <id> [--top-k n] [--mode hybrid|vector|keyword]
  kb rm <slug> --tenant <id>                    delete it with its documents and chunks
  secrets rotate                                re-encrypt stored secrets under PROMPTRUN_SECRET
                                                (old secret in PROMPTRUN_PREVIOUS_SECRETS)
  db copy --from <url> --to <url>               copy a whole database into an empty one
                                                (e.g. file:./data/promptrun.db → postgres://…)
`;

/** Every command by `<group> <action>`; a Map, so a name such as `constructor` is not found. */
const COMMANDS = new Map<string, Command>(
  Object.entries({
    serve,
    ...databaseCommands,
    ...tenantCommands,
    ...keyCommands,
    ...promptCommands,
    ...envCommands,
    ...webhookCommands,
    ...knowledgeBaseCommands,
    ...workflowCommands,
  } satisfies CommandTable),
);

const { values: flags, positionals } = (() => {
  try {
    return parseArgs({
      args: Bun.argv.slice(2),
      allowPositionals: true,
      options: {
        json: { type: "boolean", default: false },
        inactive: { type: "boolean", default: false },
        tenant: { type: "string" },
        events: { type: "string" },
        webhook: { type: "string" },
        run: { type: "string" },
        from: { type: "string" },
        to: { type: "string" },
        description: { type: "string" },
        "embedding-model": { type: "string" },
        "max-tokens": { type: "string" },
        overlap: { type: "string" },
        metadata: { type: "string" },
        "external-id": { type: "string" },
        "top-k": { type: "string" },
        mode: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // --json promises one JSON document even when the other arguments could not be parsed.
    if (Bun.argv.includes("--json")) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
    else process.stderr.write(`error: ${message}\n\n${USAGE}`);
    exitProcess(2);
  }
})();

const asJson = flags.json === true;

function print(json: unknown, human: string): void {
  process.stdout.write(asJson ? `${JSON.stringify(json)}\n` : `${human}\n`);
}

async function main(): Promise<void> {
  const [group, action, ...args] = positionals;
  if (flags.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (!group) throw new UsageError("missing <command>");
  const config = readProcessEnvironment();
  const command = COMMANDS.get(`${group} ${action ?? ""}`.trim());
  if (!command) throw new UsageError(`unknown command '${positionals.join(" ")}'`);
  return command({
    config,
    flags: { ...flags, json: asJson, inactive: flags.inactive === true },
    args,
    print,
  });
}

main().catch((error: unknown) => {
  const message =
    error instanceof UsageError
      ? `${error.message}\n\n${USAGE}`
      : error instanceof ConfigurationError || PromptrunError.isInstance(error)
        ? error.message
        : error instanceof Error
          ? error.message
          : String(error);
  if (asJson)
    process.stdout.write(
      `${JSON.stringify({ error: error instanceof UsageError ? error.message : message })}\n`,
    );
  else process.stderr.write(`error: ${message}\n`);
  exitProcess(error instanceof UsageError ? 2 : 1);
});
