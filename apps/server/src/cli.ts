#!/usr/bin/env bun
/**
 * `bun run promptrun <command>`: serve, migrate, and operator commands (docs/PRODUCT-RULES.md "Configuration and CLI").
 * Every command accepts --json and then prints exactly one JSON document on stdout.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { PromptrunError } from "@promptrun/core";
import { copyDatabase, storeKindOf } from "@promptrun/db";
import { ConfigurationError, readProcessEnvironment, type ServerConfig } from "./env.ts";
import { createLogger } from "./logger.ts";
import { readPromptFiles } from "./prompt-files.ts";
import { openRuntime, type Runtime, redactDatabaseUrl, startServer } from "./server.ts";

/** Ends the process with a code (named so it reads as what it is). */
const exitProcess: (code?: number) => never = process.exit.bind(process);

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
  envs set <tenantId> <environment> KEY=VALUE…  set env vars (creates the environment)
  envs list <tenantId>
  webhooks add <tenantId> <environment> <url> [--events run.completed,run.failed]
  webhooks list <tenantId>
  webhooks attempts <tenantId> [--webhook <id>] [--run <id>]
  webhooks redeliver <tenantId> <deliveryId>
  secrets rotate                                re-encrypt stored secrets under PROMPTRUN_SECRET
                                                (old secret in PROMPTRUN_PREVIOUS_SECRETS)
  db copy --from <url> --to <url>               copy a whole database into an empty one
                                                (e.g. file:./data/promptrun.db → postgres://…)
`;

class UsageError extends Error {}

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

const need = (value: string | undefined, what: string): string => {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
};

const WEBHOOK_EVENTS = ["run.completed", "run.failed"] as const;
type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

const parseEvents = (value: string | undefined): WebhookEvent[] | undefined => {
  if (value === undefined) return undefined;
  const events = value.split(",").map((event) => event.trim());
  for (const event of events)
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(event))
      throw new UsageError(`--events: '${event}' is not one of ${WEBHOOK_EVENTS.join(", ")}`);
  return events as WebhookEvent[];
};

/**
 * Tenant-scoped commands check the tenant first, so an unknown id is reported as an unknown
 * tenant rather than as whatever the command looks up next (an environment, a prompt, nothing).
 */
async function forTenant<T>(
  config: ServerConfig,
  tenantId: string,
  action: (services: Runtime["promptrun"]["services"]) => Promise<T>,
): Promise<T> {
  return withRuntime(config, async (runtime) => {
    await runtime.promptrun.services.tenants.get(tenantId);
    return action(runtime.promptrun.services);
  });
}

/** The guard's message is for tenants; the operator running the CLI also learns the setting that lifts it. */
const withPrivateUrlHint = (error: unknown): never => {
  if (
    PromptrunError.isInstance(error) &&
    error.code === "invalid" &&
    /private or loopback/.test(error.message)
  )
    throw new PromptrunError(
      "invalid",
      `${error.message} (set PROMPTRUN_ALLOW_PRIVATE_URLS=true on the server and the CLI to allow private addresses, e.g. for local receivers)`,
    );
  throw error;
};

/** The secret a SQLite install generated beside its database (see secret.ts), if there is one. */
const generatedSecretBeside = (databaseUrl: string): string | null => {
  if (!databaseUrl.startsWith("file:")) return null;
  const path = resolve(dirname(databaseUrl.slice("file:".length)), "promptrun.secret");
  return existsSync(path) ? path : null;
};

async function withRuntime<T>(config: ServerConfig, action: (runtime: Runtime) => Promise<T>): Promise<T> {
  const runtime = await openRuntime(config);
  try {
    return await action(runtime);
  } finally {
    await runtime.close();
  }
}

async function serve(config: ServerConfig): Promise<void> {
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, logger);
  if (server.demo) {
    const banner = [
      "",
      "  Promptrun is running with a demo tenant. Its API key is shown only this once:",
      "",
      `    export PROMPTRUN_API_KEY=${server.demo.apiKey}`,
      "",
      `  Prompts: ${server.demo.prompts.map((prompt) => `${prompt.slug}@${prompt.version}`).join(", ")}`,
      `  Try:  curl -s -X POST ${server.url}/api/v1/prompts/greet/latest/runs \\`,
      `          -H "Authorization: Bearer $PROMPTRUN_API_KEY" -H "Content-Type: application/json" \\`,
      `          -d '{"inputs":{"name":"Ada"}}'`,
      `  API reference: ${server.url}/docs`,
      "",
    ].join("\n");
    process.stderr.write(`${banner}\n`);
  }
  if (asJson) process.stdout.write(`${JSON.stringify({ url: server.url, demo: server.demo })}\n`);
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

async function main(): Promise<void> {
  const [group, action, ...rest] = positionals;
  if (flags.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (!group) throw new UsageError("missing <command>");
  const config = readProcessEnvironment();

  switch (`${group} ${action ?? ""}`.trim()) {
    case "serve":
      return serve(config);
    case "migrate":
      await withRuntime(config, async () => undefined);
      return print(
        { migrated: true, database: redactDatabaseUrl(config.databaseUrl) },
        `migrations applied to ${redactDatabaseUrl(config.databaseUrl)}`,
      );
    case "tenants create": {
      const name = need(rest[0], "<name>");
      const created = await withRuntime(config, (runtime) =>
        runtime.promptrun.services.tenants.create(name, { active: !flags.inactive }),
      );
      return print(
        { tenant: { id: created.tenant.id, name: created.tenant.name }, apiKey: created.apiKey },
        `tenant ${created.tenant.id} (${created.tenant.name})\nAPI key (shown once): ${created.apiKey}`,
      );
    }
    case "tenants list": {
      const tenants = await withRuntime(config, (runtime) => runtime.promptrun.services.tenants.list());
      return print(
        tenants,
        tenants
          .map((t) => `${t.id}  ${t.subscriptionActive ? "active  " : "inactive"}  ${t.name}`)
          .join("\n"),
      );
    }
    case "tenants subscription": {
      const tenantId = need(rest[0], "<tenantId>");
      const state = need(rest[1], "active|inactive");
      if (state !== "active" && state !== "inactive")
        throw new UsageError("subscription must be active or inactive");
      const tenant = await withRuntime(config, (runtime) =>
        runtime.promptrun.services.tenants.setSubscription(tenantId, state === "active"),
      );
      return print({ tenant }, `tenant ${tenant.id} subscription ${state}`);
    }
    case "keys create": {
      const tenantId = need(rest[0], "<tenantId>");
      const { apiKey } = await forTenant(config, tenantId, (services) =>
        services.tenants.createApiKey(tenantId),
      );
      return print({ apiKey }, `API key (shown once): ${apiKey}`);
    }
    case "keys revoke": {
      const match = need(rest[0], "<apiKey-or-prefix>");
      const result = await withRuntime(config, (runtime) =>
        runtime.promptrun.services.tenants.revokeApiKey(match),
      );
      return print(result, `revoked ${result.revoked} key(s)`);
    }
    case "prompts push": {
      const path = need(rest[0], "<file-or-dir>");
      const tenantId = need(flags.tenant, "--tenant <id>");
      const files = readPromptFiles(path);
      const results = await forTenant(config, tenantId, (services) => services.prompts.push(tenantId, files));
      return print(
        results.map(({ slug, version, id, tags }) => ({ slug, version, id, tags })),
        results
          .map(
            (r) =>
              `${r.slug}@${r.version} ${r.created ? "created" : "unchanged"} ${r.id}${r.tags.length ? ` [${r.tags.join(", ")}]` : ""}`,
          )
          .join("\n"),
      );
    }
    case "prompts tag": {
      const [slug, version, tag] = [
        need(rest[0], "<slug>"),
        need(rest[1], "<version>"),
        need(rest[2], "<tag>"),
      ];
      const tenantId = need(flags.tenant, "--tenant <id>");
      const result = await forTenant(config, tenantId, (services) =>
        services.prompts.tag(tenantId, slug, version, tag),
      );
      return print(
        { slug: result.slug, version: result.version, id: result.id, tags: result.tags },
        `${result.slug}@${result.version} tagged ${tag}`,
      );
    }
    case "envs set": {
      const tenantId = need(rest[0], "<tenantId>");
      const environment = need(rest[1], "<environment>");
      const pairs = rest.slice(2);
      if (pairs.length === 0) throw new UsageError("give at least one KEY=VALUE");
      const entries = pairs.map((pair): [string, string] => {
        const index = pair.indexOf("=");
        if (index <= 0) throw new UsageError(`'${pair.split("=")[0]}' is not KEY=VALUE`);
        return [pair.slice(0, index), pair.slice(index + 1)];
      });
      // fromEntries defines own keys: `__proto__=x` reaches the key check instead of vanishing.
      const values: Record<string, string> = Object.fromEntries(entries);
      const result = await forTenant(config, tenantId, (services) =>
        services.environments.setEnvVars(tenantId, environment, values),
      );
      return print(
        { environment: result.name, keys: result.envVarKeys },
        `${result.name}: ${result.envVarKeys.join(", ")}`,
      );
    }
    case "envs list": {
      const tenantId = need(rest[0], "<tenantId>");
      const environments = await forTenant(config, tenantId, (services) =>
        services.environments.list(tenantId),
      );
      return print(
        environments,
        environments.map((e) => `${e.name}: ${e.envVarKeys.join(", ") || "(no env vars)"}`).join("\n"),
      );
    }
    case "webhooks add": {
      const [tenantId, environment, url] = [
        need(rest[0], "<tenantId>"),
        need(rest[1], "<environment>"),
        need(rest[2], "<url>"),
      ];
      const events = parseEvents(flags.events);
      const { webhook, secret } = await forTenant(config, tenantId, (services) =>
        services.webhooks
          .create(tenantId, { environment, url, ...(events ? { events } : {}) })
          .catch(withPrivateUrlHint),
      );
      return print(
        { id: webhook.id, secret },
        `webhook ${webhook.id} → ${webhook.url}\nsigning secret (shown once): ${secret}`,
      );
    }
    case "webhooks list": {
      const tenantId = need(rest[0], "<tenantId>");
      const webhooks = await forTenant(config, tenantId, (services) => services.webhooks.list(tenantId));
      return print(
        webhooks,
        webhooks
          .map((w) => `${w.id}  ${w.environment}  ${w.enabled ? "enabled " : "disabled"}  ${w.url}`)
          .join("\n"),
      );
    }
    case "webhooks attempts": {
      const tenantId = need(rest[0], "<tenantId>");
      const attempts = await forTenant(config, tenantId, (services) =>
        services.webhooks.attempts(tenantId, {
          ...(flags.webhook ? { webhookId: flags.webhook } : {}),
          ...(flags.run ? { runId: flags.run } : {}),
        }),
      );
      return print(
        attempts,
        attempts
          .map(
            (a) =>
              `${a.attemptedAt}  ${a.eventType}  #${a.attempt}  ${a.responseStatus ?? "-"}  ${a.latencyMs ?? "-"}ms  ${a.error ?? ""}  delivery ${a.deliveryId}`,
          )
          .join("\n"),
      );
    }
    case "webhooks redeliver": {
      const [tenantId, deliveryId] = [need(rest[0], "<tenantId>"), need(rest[1], "<deliveryId>")];
      await forTenant(config, tenantId, (services) => services.webhooks.redeliver(tenantId, deliveryId));
      return print({ redelivered: deliveryId }, `delivery ${deliveryId} queued again`);
    }
    case "secrets rotate": {
      const result = await withRuntime(config, (runtime) =>
        runtime.promptrun.services.environments.rotateEncryption(),
      );
      return print(result, `re-encrypted ${result.reEncrypted} value(s) under the current PROMPTRUN_SECRET`);
    }
    case "db copy": {
      const from = need(flags.from, "--from <url>");
      const to = need(flags.to, "--to <url>");
      const copied = await copyDatabase(from, to);
      const total = Object.values(copied).reduce((sum, rows) => sum + rows, 0);
      const secretFile = storeKindOf(from) === "sqlite" ? generatedSecretBeside(from) : null;
      return print(
        {
          copied,
          from: redactDatabaseUrl(from),
          to: redactDatabaseUrl(to),
          ...(secretFile ? { secretFile } : {}),
        },
        [
          `copied ${total} rows from ${redactDatabaseUrl(from)} to ${redactDatabaseUrl(to)}:`,
          ...Object.entries(copied).map(([table, rows]) => `  ${table}: ${rows}`),
          ...(secretFile
            ? [
                `The source's secret was generated into ${secretFile}: give every instance that value as`,
                `PROMPTRUN_SECRET (env vars and webhook secrets are encrypted under it).`,
              ]
            : []),
        ].join("\n"),
      );
    }
    default:
      throw new UsageError(`unknown command '${positionals.join(" ")}'`);
  }
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
