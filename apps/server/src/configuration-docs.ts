/**
 * The README's configuration table and `.env.example`, generated from env.ts (names, defaults)
 * and the meanings below; `bun run config-docs` writes them, and configuration-docs.test.ts fails
 * when they drift (docs/ARCHITECTURE.md, "Configuration").
 */
import { type EnvironmentVariable, environmentDefaults, environmentSchema } from "./env.ts";

interface ConfigurationRow {
  /** Variables documented together (one README row), in `.env.example` order. */
  variables: EnvironmentVariable[];
  meaning: string;
  /** README default cell when it is not the defaults themselves (a fallback, a generated value). */
  defaultText?: string;
  /** Said after a variable's default in the README, e.g. `4 MiB`. */
  notes?: Partial<Record<EnvironmentVariable, string>>;
  /** `.env.example` value of a variable without a default. */
  examples?: Partial<Record<EnvironmentVariable, string>>;
}

const rows: ConfigurationRow[] = [
  { variables: ["PORT", "HOST"], meaning: "where the server listens" },
  {
    variables: ["DATABASE_URL"],
    meaning:
      "SQLite file (`file:…`) or `:memory:` for one instance; `postgres://user:password@host:5432/db` (or `postgresql://`) for several instances sharing it (runs are leased; `PROMPTRUN_SECRET` then required) — see [docs/DEPLOYMENT.md](docs/DEPLOYMENT.md)",
  },
  {
    variables: ["REDIS_URL"],
    meaning:
      "`redis://…` (or `rediss://`): with Postgres and several instances, thread streams, rate limits, failed console sign-ins and wake-ups are shared through it",
    examples: { REDIS_URL: "redis://cache.internal:6379" },
  },
  {
    variables: ["PROMPTRUN_REDIS_PREFIX"],
    meaning: "prefix of every Redis key and channel (deployments sharing one Redis)",
  },
  {
    variables: ["PROMPTRUN_RUN_LEASE_MS"],
    meaning:
      "with Postgres: a run stays leased to an instance this long without renewal; a dead instance's runs are taken over after it",
  },
  {
    variables: ["PROMPTRUN_SECRET"],
    defaultText: "generated and stored beside the SQLite file on first start",
    meaning: "signs stream tokens, encrypts env vars at rest (≥ 32 characters)",
  },
  {
    variables: ["PROMPTRUN_PREVIOUS_SECRETS"],
    meaning: "comma-separated old secrets still accepted for decryption (rotation)",
  },
  {
    variables: ["PROMPTRUN_PUBLIC_URL"],
    defaultText: "`http://HOST:PORT`",
    meaning: "base of URLs the server hands out",
    examples: { PROMPTRUN_PUBLIC_URL: "http://127.0.0.1:3000" },
  },
  {
    variables: ["PROMPTRUN_STREAM_URL"],
    defaultText: "`PROMPTRUN_PUBLIC_URL`",
    meaning: "base of the stream `url` in a stream-token response (`{stream_url}/stream/<thread>`)",
    examples: { PROMPTRUN_STREAM_URL: "http://127.0.0.1:3000" },
  },
  { variables: ["PROMPTRUN_STREAM_TOKEN_TTL"], meaning: "stream token lifetime in seconds" },
  {
    variables: ["PROMPTRUN_CONCURRENCY", "PROMPTRUN_TENANT_CONCURRENCY"],
    meaning: "runs executing at once: in all, and per tenant",
  },
  {
    variables: ["PROMPTRUN_QUEUE_MEMORY_RUNS"],
    meaning:
      "queued runs kept in memory at most (one instance); a deeper backlog stays in the database and is paged in as runs start",
  },
  { variables: ["PROMPTRUN_WEBHOOK_RETRY_SCHEDULE"], meaning: "seconds between webhook attempts" },
  {
    variables: ["PROMPTRUN_WEBHOOK_TIMEOUT_MS"],
    meaning:
      "one webhook attempt, connecting included, until the response headers; longer is a failed attempt",
  },
  {
    variables: ["PROMPTRUN_WEBHOOK_CONCURRENCY", "PROMPTRUN_WEBHOOK_TENANT_CONCURRENCY"],
    meaning:
      "webhook attempts in flight: in all, and per tenant (one per webhook); free slots go round-robin over tenants",
  },
  {
    variables: ["PROMPTRUN_MAX_WEBHOOKS_PER_ENVIRONMENT"],
    meaning: "webhooks an environment may have; one more is `409`",
  },
  {
    variables: ["PROMPTRUN_RATE_LIMIT"],
    meaning:
      "per-tenant create-run rate and burst (stream tokens, renders, document uploads and knowledge-base searches alike, each in a bucket of its own)",
  },
  {
    variables: ["PROMPTRUN_MAX_PENDING_RUNS"],
    meaning: "pending (queued or executing) runs a tenant may have; more get `429` with `Retry-After`",
  },
  {
    variables: [
      "PROMPTRUN_MAX_API_KEYS",
      "PROMPTRUN_MAX_ENVIRONMENTS",
      "PROMPTRUN_MAX_WEBHOOKS",
      "PROMPTRUN_MAX_PROMPT_VERSIONS",
    ],
    meaning:
      "per-tenant quotas: unrevoked API keys, environments (`production` included), webhooks (all environments), prompt versions (all prompts); one more is `409` naming the quota, over tRPC and the CLI alike ([docs/SECURITY.md](docs/SECURITY.md))",
  },
  {
    variables: ["PROMPTRUN_MAX_STREAMS_PER_THREAD"],
    meaning: "SSE streams open at once on one thread of a tenant; more get `429`",
  },
  {
    variables: ["PROMPTRUN_HTTP_IDLE_TIMEOUT"],
    meaning:
      "seconds (≤ 255) a connection may stay silent, mid-request included, before it is closed; SSE streams are exempt",
  },
  {
    variables: ["PROMPTRUN_PROVIDER_IDLE_TIMEOUT_MS", "PROMPTRUN_PROVIDER_TIMEOUT_MS"],
    meaning:
      "a provider stream silent this long, or an attempt lasting this long, fails the attempt (retried as transient)",
  },
  {
    variables: ["PROMPTRUN_MAX_BODY_BYTES"],
    notes: { PROMPTRUN_MAX_BODY_BYTES: "1 MiB" },
    meaning:
      "largest request body: create-run over REST and every tRPC call (1 KiB – 1 GiB); a larger one is `413`. Large image and file inputs go as https URLs, not data: URLs",
  },
  {
    variables: ["PROMPTRUN_MAX_UPLOAD_BYTES"],
    notes: { PROMPTRUN_MAX_UPLOAD_BYTES: "20 MiB" },
    meaning:
      "largest document uploaded to a knowledge base (instead of `PROMPTRUN_MAX_BODY_BYTES` on that route); a larger one is `413`, refused by its Content-Length before it is read (see [docs/KNOWLEDGE.md](docs/KNOWLEDGE.md))",
  },
  {
    variables: ["PROMPTRUN_EMBEDDING_MODEL"],
    meaning:
      "`provider:model` embedding a knowledge base created without `embeddingModel`; `dev:hash` is built in (local, keyless, for demos and tests)",
  },
  {
    variables: ["PROMPTRUN_INGEST_CONCURRENCY"],
    meaning: "documents each instance extracts, chunks and embeds at once (background ingestion)",
  },
  {
    variables: ["PROMPTRUN_MAX_OUTPUT_BYTES"],
    notes: { PROMPTRUN_MAX_OUTPUT_BYTES: "4 MiB" },
    meaning: "UTF-8 bytes of a run's output; past it the run fails (not retried)",
  },
  {
    variables: ["PROMPTRUN_PROVIDER_MAX_RESPONSE_BYTES", "PROMPTRUN_PROVIDER_MAX_LINE_BYTES"],
    notes: { PROMPTRUN_PROVIDER_MAX_RESPONSE_BYTES: "64 MiB", PROMPTRUN_PROVIDER_MAX_LINE_BYTES: "1 MiB" },
    meaning:
      "bytes of one provider response (per attempt), and of one line of it (an SSE line, or a body without newlines); past either the run fails (not retried)",
  },
  {
    variables: ["PROMPTRUN_TOOL_TIMEOUT_MS", "PROMPTRUN_TOOL_MAX_RESPONSE_BYTES"],
    notes: { PROMPTRUN_TOOL_MAX_RESPONSE_BYTES: "1 MiB" },
    meaning:
      "one `http` or `mcp` tool call (unless the tool sets `timeoutSeconds`), and the bytes of its response read; past either the model gets a tool error (see [docs/TOOLS.md](docs/TOOLS.md))",
  },
  {
    variables: ["PROMPTRUN_ALLOW_PRIVATE_URLS"],
    meaning: "allow tenant-supplied URLs on private ranges",
  },
  {
    variables: ["PROMPTRUN_PROVIDERS"],
    meaning:
      "OpenAI-compatible endpoints: `name=url[\\|apiKey],…`; a prompt whose provider is none of these, `openai`, `anthropic` or `dev` is rejected at push",
    examples: { PROMPTRUN_PROVIDERS: "ollama=http://127.0.0.1:11434/v1" },
  },
  {
    variables: ["PROMPTRUN_PRICES"],
    meaning:
      'JSON price overrides: `{"provider:model": {"inputPerMillion", "cachedInputPerMillion", "outputPerMillion"}}`',
    examples: { PROMPTRUN_PRICES: '{"ollama:llama3.2":{"inputPerMillion":0,"outputPerMillion":0}}' },
  },
  {
    variables: ["PROMPTRUN_ADMIN_TOKEN"],
    meaning: "enables tenant administration over tRPC (`x-promptrun-admin-token` header)",
  },
  {
    variables: ["PROMPTRUN_METRICS_TOKEN"],
    meaning:
      "when set (≥ 16 characters), `GET /metrics` needs `Authorization: Bearer <token>` (else `401`); unset, it is open — keep it off the public network (see [docs/DEPLOYMENT.md](docs/DEPLOYMENT.md))",
  },
  { variables: ["PROMPTRUN_PING_INTERVAL_MS"], meaning: "SSE heartbeat" },
  {
    variables: ["PROMPTRUN_REPLAY_BUFFER_SECONDS"],
    meaning: "per-thread buffer for `Last-Event-ID` resumption",
  },
  {
    variables: ["PROMPTRUN_MAX_ATTEMPTS", "PROMPTRUN_RETRY_BASE_MS"],
    meaning: "provider attempts per run and backoff base",
  },
  { variables: ["PROMPTRUN_SEED_DEMO"], meaning: "create the demo tenant on an empty database" },
  {
    variables: ["PROMPTRUN_CONSOLE"],
    meaning:
      "serve the web console at `/console` (built by `bun run console:build`) and accept its session cookie; `false`: `/console`, everything under it and `/console/session` are `404` (see [docs/console.md](docs/console.md))",
  },
  {
    variables: ["PROMPTRUN_DEV_MODEL"],
    meaning:
      "the built-in development model `dev:echo`; `false`: pushing a `dev:*` prompt is a `400`, runs of stored ones fail, and the demo seed leaves them out",
  },
  { variables: ["LOG_LEVEL"], meaning: "JSON logs (pino) with secrets redacted" },
  {
    variables: ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"],
    meaning: "provider credentials; an environment's or a run's env vars of the same names take precedence",
  },
];

const defaultOf = (variable: EnvironmentVariable): string | undefined =>
  (environmentDefaults as Partial<Record<EnvironmentVariable, string>>)[variable];

/** Variables of the schema that no row documents, or that a row names twice or wrongly. */
export function undocumentedVariables(): string[] {
  const documented = rows.flatMap((row) => row.variables);
  const known = Object.keys(environmentSchema.shape);
  return [
    ...known.filter((name) => documented.filter((entry) => entry === name).length !== 1),
    ...documented.filter((name) => !known.includes(name)),
  ];
}

function defaultCell(row: ConfigurationRow): string {
  if (row.defaultText) return row.defaultText;
  if (row.variables.every((variable) => defaultOf(variable) === undefined)) return "unset";
  return row.variables
    .map((variable) => {
      const value = defaultOf(variable);
      const note = row.notes?.[variable];
      return value === undefined ? "unset" : `\`${value}\`${note ? ` (${note})` : ""}`;
    })
    .join(" / ");
}

function variablesCell(row: ConfigurationRow): string {
  const names = row.variables.map((variable) => `\`${variable}\``);
  // Providers' credentials read as a list; numeric pairs as `A` / `B` like their defaults.
  return row.variables.every((variable) => defaultOf(variable) === undefined)
    ? names.join(", ")
    : names.join(" / ");
}

/** The README's table, from its header row to its last row. */
export function renderReadmeTable(): string {
  const lines = ["| variable | default | meaning |", "|---|---|---|"];
  for (const row of rows) lines.push(`| ${variablesCell(row)} | ${defaultCell(row)} | ${row.meaning} |`);
  return `${lines.join("\n")}\n`;
}

/** The whole `.env.example`. */
export function renderEnvExample(): string {
  const lines = [
    "# Promptrun configuration: every variable, commented out, with its default (or an example).",
    '# Meanings: README "Configuration". Generated by `bun run config-docs` from apps/server/src/env.ts.',
  ];
  for (const row of rows) {
    for (const variable of row.variables) {
      const value = defaultOf(variable);
      const example = row.examples?.[variable];
      if (value !== undefined) lines.push(`# ${variable}=${value}`);
      else if (example !== undefined) lines.push(`# ${variable}=${example}  # an example: unset by default`);
      else lines.push(`# ${variable}=`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** Replaces the table inside the README's "## Configuration" section. */
export function withReadmeTable(readme: string): string {
  const section = readme.indexOf("## Configuration");
  const start = readme.indexOf("| variable | default | meaning |", section);
  if (section === -1 || start === -1) throw new Error("README has no configuration table");
  const tableEnd = readme.indexOf("\n\n", start);
  const end = tableEnd === -1 ? readme.length : tableEnd + 1;
  return readme.slice(0, start) + renderReadmeTable() + readme.slice(end);
}
