/** Section 2's report: the latency table, where the first token goes, relay CPU, capacity, targets. */
import { benchPrompts } from "../bench-prompts.ts";
import { formatAddedMs, formatCores, formatCount, formatMs } from "../format.ts";
import { LatencyHistogram } from "../latency-histogram.ts";
import { markdownTable } from "../markdown-table.ts";
import { type CapacitySearch, type CapacityStep, capacityOf, formatCapacity } from "../stream-capacity.ts";
import type { StreamCpuReading, StreamCpuSplit } from "../stream-cpu-cost.ts";
import type { StreamBatchResult } from "../stream-measurement.ts";
import { summarize } from "../summarize.ts";
import type { SectionResult, TargetCheck } from "./bench-context.ts";
import { renderSetupPhases, type SetupPhases } from "./stream-setup-phases.ts";
import type { StreamPath } from "./streaming-paths.ts";
import { PROCESS_OF, PROMPTRUN_CONCURRENCY } from "./streaming-rig.ts";
import type { StreamingPlan } from "./streaming-section.ts";
import {
  firstTokenScalingTarget,
  formatRatio,
  relayCpuTargets,
  relayedTokensScalingTarget,
} from "./streaming-targets.ts";

export interface PathResult {
  path: StreamPath;
  concurrency: number;
  batch: StreamBatchResult;
  cores: Record<string, number>;
}

/** A relay's CPU per stream over a batch of long and of short streams, and their split. */
export interface RelayCpu {
  path: StreamPath;
  long: StreamCpuReading;
  short: StreamCpuReading;
  split: StreamCpuSplit;
}

export interface StreamingReadings {
  results: PathResult[];
  cpu: RelayCpu[];
  /** Promptrun's stream set-up, each request measured alone. */
  setup: SetupPhases;
  capacity: CapacitySearch<StreamPath>;
  portkey: { version: string } | { error: string };
  plan: StreamingPlan;
}

const TITLE = "2. Streaming overhead";
const timingsOf = (result: PathResult) => result.batch.timings;
const firstTokens = (result: PathResult) => summarize(timingsOf(result).map((timing) => timing.firstTokenMs));
const find = (results: PathResult[], path: StreamPath, concurrency: number) =>
  results.find((result) => result.path === path && result.concurrency === concurrency);

/** Tokens received per second of the batch's wall time. */
const tokensPerSecond = (result: PathResult) =>
  timingsOf(result).reduce((sum, timing) => sum + timing.tokens, 0) / (result.batch.elapsedMs / 1000);

/** One row of the latency table: the path's figures and what it adds to the upstream read directly. */
function latencyRow(result: PathResult, direct: PathResult | undefined): Array<string | number> {
  const first = firstTokens(result);
  const last = summarize(timingsOf(result).map((timing) => timing.lastTokenMs));
  const perToken = LatencyHistogram.from(result.batch.perToken);
  const directFirst = direct ? firstTokens(direct) : null;
  const directLast = direct ? summarize(timingsOf(direct).map((timing) => timing.lastTokenMs)) : null;
  const directToken = direct ? LatencyHistogram.from(direct.batch.perToken) : null;
  const added = (value: number, floor: number | undefined) => formatAddedMs(value - (floor ?? Number.NaN));
  const isBaseline = result.path === "upstream directly";
  const { errors, firstError } = result.batch;
  return [
    result.path,
    result.concurrency,
    `${formatCount(first.count)}${errors ? ` (${errors} failed: ${firstError})` : ""}`,
    `${formatMs(first.p50)} / ${formatMs(first.p99)}`,
    `${formatMs(last.p50)} / ${formatMs(last.p99)}`,
    `${formatMs(perToken.percentile(50))} / ${formatMs(perToken.percentile(99))}`,
    isBaseline ? "—" : `${added(first.p50, directFirst?.p50)} / ${added(first.p99, directFirst?.p99)}`,
    isBaseline ? "—" : `${added(last.p50, directLast?.p50)} / ${added(last.p99, directLast?.p99)}`,
    isBaseline
      ? "—"
      : `${added(perToken.percentile(50), directToken?.percentile(50))} / ${added(perToken.percentile(99), directToken?.percentile(99))}`,
    Object.entries(result.cores)
      .map(([name, cores]) => `${name} ${formatCores(cores)}`)
      .join(", "),
  ];
}

const addedFirstP50 = (results: PathResult[], concurrency: number) => {
  const promptrun = find(results, "Promptrun (SSE)", concurrency);
  const direct = find(results, "upstream directly", concurrency);
  return promptrun && direct ? firstTokens(promptrun).p50 - firstTokens(direct).p50 : Number.NaN;
};

const addedTokenP50 = (results: PathResult[], concurrency: number) => {
  const promptrun = find(results, "Promptrun (SSE)", concurrency);
  const direct = find(results, "upstream directly", concurrency);
  if (!promptrun || !direct) return Number.NaN;
  return (
    LatencyHistogram.from(promptrun.batch.perToken).percentile(50) -
    LatencyHistogram.from(direct.batch.perToken).percentile(50)
  );
};

/** The targets of earlier rounds (kept so a regression shows), then issue #24's. */
function streamingTargets(readings: StreamingReadings): TargetCheck[] {
  const { results, cpu } = readings;
  const oneStream = addedFirstP50(results, 1);
  const hundred = addedFirstP50(results, 100);
  const tokenAdded = addedTokenP50(results, 100);
  const promptrun = cpu.find((reading) => reading.path === "Promptrun (SSE)");
  const relay = cpu.find((reading) => reading.path === "bare Bun relay (floor)");
  const promptrunAt100 = find(results, "Promptrun (SSE)", 100);
  return [
    {
      target:
        "earlier target: added time to first token < 2 ms p50 (one stream, as the issue's Portkey reference)",
      measured: `${formatAddedMs(oneStream)} ms (at 100 streams: ${formatAddedMs(hundred)} ms)`,
      met: oneStream < 2,
    },
    {
      target: "earlier target: added per-token latency at 100 streams < 0.5 ms p50",
      measured: `${formatAddedMs(tokenAdded)} ms`,
      met: tokenAdded < 0.5,
    },
    ...(promptrun && relay ? relayCpuTargets(promptrun.split, relay.split) : []),
    firstTokenScalingTarget(oneStream, hundred),
    relayedTokensScalingTarget(promptrunAt100 ? tokensPerSecond(promptrunAt100) : Number.NaN),
  ];
}

function breakdownTable(results: PathResult[]): string {
  const rows = results
    .filter((result) => result.path === "Promptrun (SSE)")
    .map((result) => {
      const of = (pick: (timing: StreamBatchResult["timings"][number]) => number | undefined) =>
        summarize(
          timingsOf(result)
            .map(pick)
            .filter((value): value is number => value !== undefined),
        );
      const pair = (summary: ReturnType<typeof summarize>) =>
        `${formatMs(summary.p50)} / ${formatMs(summary.p99)}`;
      return [
        result.concurrency,
        pair(of((timing) => timing.acceptedMs)),
        pair(of((timing) => timing.runStartedMs)),
        pair(of((timing) => timing.firstTokenMs)),
      ];
    });
  return markdownTable(
    ["streams at once", "202 received", "`run.started` received", "first `run.token` received"],
    rows,
  );
}

function cpuTable(cpu: RelayCpu[], plan: StreamingPlan): string {
  const [long, short] = [cpu[0]?.long.tokens ?? 0, cpu[0]?.short.tokens ?? 0];
  const relay = cpu.find((reading) => reading.path === "bare Bun relay (floor)");
  return markdownTable(
    [
      "path (its own process)",
      `CPU ms per ${long}-token stream`,
      `CPU ms per ${short}-token stream`,
      "per relayed token µs",
      "per stream besides its tokens ms",
      "vs the bare relay (per token / per stream)",
    ],
    cpu.map((reading) => [
      reading.path,
      formatMs(reading.long.msPerStream),
      formatMs(reading.short.msPerStream),
      formatMs(reading.split.perTokenUs),
      formatMs(reading.split.perStreamMs),
      reading === relay || !relay
        ? "—"
        : `${formatRatio(reading.split.perTokenUs, relay.split.perTokenUs)} / ${formatRatio(reading.split.perStreamMs, relay.split.perStreamMs)}`,
    ]),
  ).concat(
    `\n\n${formatCount(plan.cpuLongStreams)} ${long}-token and ${formatCount(plan.cpuShortStreams)} ${short}-token streams per path, 100 at once ` +
      `(\`${benchPrompts.stream2.slug}\` through Promptrun). Per token = the difference per stream / ${long - short} tokens; per stream = the ${short}-token stream less its tokens. ` +
      "Promptrun's per-stream cost is what its client does: mint the stream token, open the SSE stream, create the run and commit it, start the provider call, finish (cost, completion commit, events); " +
      "the bare relay's is accept the request, open the upstream call, answer. At 100 streams started together, Promptrun's per-stream cost is queued on one thread: it is most of the added time to first token there.",
  );
}

/** "+12.3 ms ✗ (promptrun 0.95 cores)": a relay at one level, its process's cores beside it. */
function capacityCell(step: CapacityStep, relay: StreamPath): string {
  const name = PROCESS_OF[relay] ?? "";
  const failed = step.reading.errors ? ` (${step.reading.errors} failed)` : "";
  return `${formatAddedMs(step.addedP99Ms)}${failed}${step.withinLimit ? "" : " ✗"} (${name} ${formatCores(step.reading.cores[name] ?? Number.NaN)} cores)`;
}

function capacityTable(capacity: CapacitySearch<StreamPath>): string {
  const relays = Object.keys(capacity.steps) as StreamPath[];
  const rows = capacity.baseline.map(({ streams, reading }) => [
    formatCount(streams),
    `${formatMs(reading.perTokenP99Ms)}${reading.errors ? ` (${reading.errors} failed)` : ""} (client ${formatCores(reading.cores.client ?? Number.NaN)}, upstream ${formatCores(reading.cores.upstream ?? Number.NaN)} cores)`,
    ...relays.map((relay) => {
      const step = capacity.steps[relay].find((candidate) => candidate.streams === streams);
      return step ? capacityCell(step, relay) : "—";
    }),
  ]);
  const summary = relays
    .map(
      (relay) =>
        `${relay}: **${formatCapacity(capacityOf(capacity.steps[relay], capacity.levels), capacity.levels)}**`,
    )
    .join("; ");
  return [
    markdownTable(
      [
        "streams at once",
        "upstream directly, per token p99 ms",
        ...relays.map((relay) => `${relay}, added p99 ms`),
      ],
      rows,
    ),
    "",
    `Concurrent 50 tokens/s streams carried with added per-token p99 < ${capacity.limitMs} ms: ${summary}. ✗ = over the limit (that relay's last level).`,
  ].join("\n");
}

function methodText(readings: StreamingReadings): string {
  const { plan } = readings;
  const { limitMs } = readings.capacity;
  const shape = plan.capacityShape;
  return [
    "A fake OpenAI-compatible upstream (own process) streams 200 tokens 5 ms apart; each token carries the wall-clock time it was sent, so every reader measures per-token delivery latency (send → receive) as well as time to first and last token from the moment it sent its request. " +
      "The client process reads the upstream directly, through the bare relay and through the Portkey gateway like the OpenAI SDK (fetch + SSE parser); through Promptrun it behaves like a browser app: mint a stream token, subscribe with `EventSource` (the `eventsource` package) and wait for `ready`, then `POST` the run (that request is inside the time to first token). " +
      `Promptrun reaches the upstream as an OpenAI-compatible provider (\`PROMPTRUN_PROVIDERS\`); concurrency ${formatCount(PROMPTRUN_CONCURRENCY)}. Added = path − upstream directly at the same concurrency. ` +
      "The AI SDK row is no server at all: the client process itself reads the upstream with `streamText` on `@ai-sdk/openai-compatible` (the versions the engine uses), to separate the SDK's own cost per token from Promptrun's.",
    "",
    "The bare Bun relay is the floor for any relay (own process, `bench/src/processes/bare-relay.ts`): per request it fetches the same upstream stream, parses each SSE event's JSON (`eventsource-parser`) and writes one SSE event per token on a direct stream; no auth, no storage. " +
      "Every server process may hold 4,096 fetches open (`BUN_CONFIG_MAX_HTTP_REQUESTS`; Bun's default is 256).",
    "",
    "version" in readings.portkey
      ? `Portkey: \`@portkey-ai/gateway\` ${readings.portkey.version} from npm, run under Bun, forwarding with \`x-portkey-provider: openai\` and \`x-portkey-custom-host\`.`
      : `Portkey could not be started: ${readings.portkey.error}`,
    "",
    `Capacity: levels of ${plan.capacityLevels.map(formatCount).join(", ")} concurrent streams (the last is the cap), each stream ${shape.tokens} tokens 20 ms apart (50 tokens/s, ${(shape.tokens / 50).toFixed(0)} s), ` +
      `started at random moments within the first second; each level is read on the upstream directly, then on every relay still under ${limitMs} ms. ` +
      "Added per-token p99 = the relay's per-token p99 (stamped send → client receive) − the upstream's read directly at the same level; a relay stops at its first level over the limit or with failed streams. " +
      "Everything (upstream, relays, client) shares the machine's cores, so the level where the client or the upstream runs out of CPU bounds every relay.",
  ].join("\n");
}

export function renderStreaming(readings: StreamingReadings): SectionResult {
  const { results } = readings;
  const rows = results.map((result) =>
    latencyRow(result, find(results, "upstream directly", result.concurrency)),
  );
  const body = [
    methodText(readings),
    "",
    markdownTable(
      [
        "path",
        "streams at once",
        "streams",
        "first token p50 / p99 ms",
        "last token p50 / p99 ms",
        "per token p50 / p99 ms",
        "added first token p50 / p99",
        "added last token p50 / p99",
        "added per token p50 / p99",
        "CPU cores used",
      ],
      rows,
    ),
    "",
    "Where Promptrun's time to first token goes (from sending the create-run request; p50 / p99 ms):",
    "",
    breakdownTable(results),
    "",
    "Relay CPU per stream and per token (the relay's process: CPU seconds over the batch / streams):",
    "",
    cpuTable(readings.cpu, readings.plan),
    "",
    "Where Promptrun's per-stream cost goes: each request of a stream's set-up measured alone (server CPU):",
    "",
    renderSetupPhases(
      readings.setup,
      readings.cpu.find((reading) => reading.path === "Promptrun (SSE)")?.short.msPerStream,
    ),
    "",
    "Capacity: concurrent streams of 50 tokens/s (a report row, not a target):",
    "",
    capacityTable(readings.capacity),
  ].join("\n");
  return { title: TITLE, body, targets: streamingTargets(readings) };
}
