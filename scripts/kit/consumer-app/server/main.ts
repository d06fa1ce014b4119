import { join } from "node:path";
import { startAppServer } from "./app-server";

// biome-ignore lint/suspicious/noUndeclaredEnvVars: a standalone app outside the monorepo's turbo tasks
const promptrunUrl = process.env.PROMPTRUN_URL;
// biome-ignore lint/suspicious/noUndeclaredEnvVars: a standalone app outside the monorepo's turbo tasks
const apiKey = process.env.PROMPTRUN_API_KEY;
if (!promptrunUrl || !apiKey) {
  console.error("PROMPTRUN_URL and PROMPTRUN_API_KEY are required");
  process.exit(1);
}
const app = startAppServer({ promptrunUrl, apiKey, staticDir: join(import.meta.dir, "..", "dist") });
console.log(JSON.stringify({ url: app.url }));
