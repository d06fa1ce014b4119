/**
 * Where a stream's set-up goes on the server: the CPU of each request a stream's client makes,
 * measured alone (the same requests the stream client makes, from this process, many at once).
 */
import { benchPrompts } from "../bench-prompts.ts";
import { createRun, engineStats, mapConcurrently, mintStreamToken, pollUntil } from "../bench-server.ts";
import { formatCount } from "../format.ts";
import { markdownTable } from "../markdown-table.ts";
import { startCpuWindow } from "../process-stats.ts";
import type { PromptrunServer } from "../promptrun-server.ts";

export interface SetupPhase {
  name: string;
  /** Server CPU µs per request (per run for the create, its execution included). */
  cpuUs: number;
}

export interface SetupPhases {
  phases: SetupPhase[];
  requests: number;
  concurrency: number;
}

type Target = Pick<PromptrunServer, "url" | "apiKey" | "pid">;

/** Until the engine has nothing queued or executing (a create's execution is part of its cost). */
const settled = async (target: Target) => {
  const idle = async () => {
    const stats = await engineStats(target);
    return stats.queued === 0 && stats.executing === 0;
  };
  if (!(await pollUntil(idle, 60_000, 20))) throw new Error("the server's runs did not end within 60 s");
};

/** Reads an SSE response until its `ready` event, then drops the connection. */
const untilReady = async (response: Response, abort: AbortController) => {
  const reader = response.body?.getReader();
  if (!reader) throw new Error(`SSE connect: HTTP ${response.status} without a body`);
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("event: ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("SSE stream ended before ready");
    text += decoder.decode(value, { stream: true });
  }
  abort.abort();
  await reader.cancel().catch(() => {});
};

/**
 * Mints `total` stream tokens, opens each SSE stream until `ready`, and creates `total` two-token
 * runs on new threads (no subscriber), each phase alone with `concurrency` requests in flight;
 * server CPU per request over each phase (the create's until every run has ended).
 */
export async function measureSetupPhases(
  target: Target,
  total: number,
  concurrency: number,
): Promise<SetupPhases> {
  const indexes = [...Array(total).keys()];
  let tokens: Array<{ path: string; token: string }> = [];
  const phases: Array<[string, () => Promise<unknown>]> = [
    [
      "mint a stream token (POST /api/v1/threads/{thread}/stream-token)",
      async () => {
        tokens = await mapConcurrently(indexes, concurrency, () =>
          mintStreamToken(target, crypto.randomUUID()),
        );
      },
    ],
    [
      "open the SSE stream until `ready`, then close it",
      () =>
        mapConcurrently(tokens, concurrency, async ({ path, token }) => {
          const abort = new AbortController();
          const response = await fetch(`${target.url}${path}`, {
            headers: { authorization: `Bearer ${token}` },
            signal: abort.signal,
          });
          await untilReady(response, abort);
        }),
    ],
    [
      `create a ${benchPrompts.stream2.slug} run on a new thread, and its execution`,
      () =>
        mapConcurrently(indexes, concurrency, () =>
          createRun(target, benchPrompts.stream2.slug, { thread: crypto.randomUUID() }),
        ),
    ],
  ];
  const measured: SetupPhase[] = [];
  for (const [name, phase] of phases) {
    await settled(target);
    const stop = startCpuWindow([target.pid]);
    await phase();
    await settled(target);
    const cpuSeconds = stop().cpuSeconds[target.pid] ?? Number.NaN;
    measured.push({ name, cpuUs: (cpuSeconds / total) * 1e6 });
  }
  return { phases: measured, requests: total, concurrency };
}

/** The phases as a table, beside the whole short stream's per-stream CPU. */
export function renderSetupPhases(setup: SetupPhases, wholeStreamMs: number | undefined): string {
  const sum = setup.phases.reduce((total, phase) => total + phase.cpuUs, 0);
  return [
    markdownTable(
      ["phase", "server CPU µs per request"],
      [
        ...setup.phases.map((phase) => [phase.name, formatCount(phase.cpuUs)]),
        ["sum of the phases", formatCount(sum)],
        [
          "the whole 2-token stream through Promptrun (the CPU table above)",
          wholeStreamMs === undefined ? "—" : formatCount(wholeStreamMs * 1000),
        ],
      ],
    ),
    "",
    `${formatCount(setup.requests)} of each, ${setup.concurrency} at once, each phase alone on the same server after the CPU batches above; ` +
      "CPU = the server process's (all its threads, `/proc`), over the phase and, for the create, until every run it created has ended. " +
      "The sum need not equal the whole stream's figure: the phases run later (the server's JIT warmer) and alone (no overlap between a stream's requests), and the whole stream also relays its two tokens.",
  ].join("\n");
}
