import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { copyDatabase, redactDatabaseUrl, storeKindOf } from "@promptrun/db";
import { type CommandTable, need, withRuntime } from "./command.ts";

/** The secret a SQLite install generated beside its database (see secret.ts), if there is one. */
const generatedSecretBeside = (databaseUrl: string): string | null => {
  if (!databaseUrl.startsWith("file:")) return null;
  const path = resolve(dirname(databaseUrl.slice("file:".length)), "promptrun.secret");
  return existsSync(path) ? path : null;
};

/** `migrate`, `secrets rotate` and `db copy`: the database and what is encrypted in it. */
export const databaseCommands: CommandTable = {
  async migrate({ config, print }) {
    await withRuntime(config, async () => undefined);
    print(
      { migrated: true, database: redactDatabaseUrl(config.databaseUrl) },
      `migrations applied to ${redactDatabaseUrl(config.databaseUrl)}`,
    );
  },

  async "secrets rotate"({ config, print }) {
    const result = await withRuntime(config, (runtime) =>
      runtime.promptrun.services.environments.rotateEncryption(),
    );
    print(result, `re-encrypted ${result.reEncrypted} value(s) under the current PROMPTRUN_SECRET`);
  },

  async "db copy"({ flags, print }) {
    const from = need(flags.from, "--from <url>");
    const to = need(flags.to, "--to <url>");
    const copied = await copyDatabase(from, to);
    const total = Object.values(copied).reduce((sum, rows) => sum + rows, 0);
    const secretFile = storeKindOf(from) === "sqlite" ? generatedSecretBeside(from) : null;
    print(
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
  },
};
