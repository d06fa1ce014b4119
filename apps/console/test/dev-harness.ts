/**
 * A development and screen-test harness for the console while its server side is built apart:
 * a real in-process Promptrun (@promptrun/testing: in-memory SQLite, the scripted model) behind a
 * small server that serves the built console (apps/console/dist) under /console and relays
 * /api, /trpc and /stream to Promptrun with the tenant's API key added, standing in for the
 * session cookie. `GET /console/session` answers the seeded tenant. The real sign-in and cookie
 * rules are tested against the real server (docs/console.md).
 *
 * Run it by hand: `bun apps/console/test/dev-harness.ts` (prints the URL).
 */
import { existsSync } from "node:fs";
import { join, normalize, resolve } from "node:path";
import {
  type StartPromptrunOptions,
  startPromptrun,
  type TestPrompt,
  type TestPromptrun,
} from "@promptrun/testing";

const distDir = resolve(import.meta.dir, "../dist");

export interface ConsoleHarness {
  url: string;
  promptrun: TestPromptrun;
  stop(): Promise<void>;
}

const serveDist = (pathname: string): Response => {
  const relative = pathname.replace(/^\/console\/?/, "");
  const candidate = normalize(join(distDir, relative));
  const inside = candidate.startsWith(distDir) && relative.includes(".") && existsSync(candidate);
  return new Response(Bun.file(inside ? candidate : join(distDir, "index.html")));
};

export async function startConsoleHarness(
  options: { prompts?: TestPrompt[]; config?: StartPromptrunOptions["config"] } = {},
): Promise<ConsoleHarness> {
  if (!existsSync(join(distDir, "index.html"))) {
    const build = Bun.spawnSync(["bun", resolve(import.meta.dir, "../../../scripts/console-build.ts")]);
    if (build.exitCode !== 0) throw new Error(`console build failed: ${build.stderr.toString()}`);
  }
  const promptrun = await startPromptrun({ prompts: options.prompts ?? [], config: options.config });
  const tenant = { id: promptrun.tenantId, name: "Test tenant" };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === "/console/session") {
        return request.method === "DELETE" ? new Response(null, { status: 204 }) : Response.json({ tenant });
      }
      if (url.pathname === "/console" || url.pathname.startsWith("/console/")) return serveDist(url.pathname);
      if (/^\/(api|trpc|stream)\//.test(url.pathname)) {
        const headers = new Headers(request.headers);
        if (!url.pathname.startsWith("/stream/")) headers.set("authorization", `Bearer ${promptrun.apiKey}`);
        headers.delete("host");
        return fetch(`${promptrun.url}${url.pathname}${url.search}`, {
          method: request.method,
          headers,
          body: request.body,
          redirect: "manual",
        });
      }
      return new Response("not found", { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    promptrun,
    async stop() {
      server.stop(true);
      await promptrun.stop();
    },
  };
}

if (import.meta.main) {
  const harness = await startConsoleHarness({
    prompts: [
      {
        slug: "greet",
        inputs: { name: { type: "string" } },
        messages: [{ role: "user", content: "Say hello to {{name}}." }],
        tags: ["production"],
      },
    ],
  });
  console.log(`console harness: ${harness.url}/console  (Promptrun at ${harness.promptrun.url})`);
}
