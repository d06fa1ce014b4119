/**
 * Holds many SSE subscribers on raw sockets and measures delivery latency of stamped tokens.
 * Commands on stdin: open {host, port, subscriptions}, reset, report, close (see
 * ../sse-subscriber-pool.ts for the parent side).
 */

import { commands, emit } from "../child-protocol.ts";
import { wallClockMs } from "../clock.ts";
import { LatencyHistogram } from "../latency-histogram.ts";
import { openSseSocket, type SseSocket } from "../sse-socket-client.ts";

/** Ends the process with a code. */
const exitProcess: (code?: number) => never = process.exit.bind(process);

interface Subscription {
  path: string;
  token: string;
}
type Command =
  | { type: "open"; host: string; port: number; subscriptions: Subscription[]; parallelConnects?: number }
  /** Latency is recorded only for tokens sent within [sentFrom, sentTo] (wall-clock ms), when given. */
  | { type: "reset"; sentFrom?: number; sentTo?: number }
  | { type: "report" }
  | { type: "close" };

const DELTA_MARK = '"delta":"@';
const sockets: SseSocket[] = [];
let histogram = new LatencyHistogram();
let deliveries = 0;
let completed = 0;
let closedConnections = 0;
let firstDeliveryAt = 0;
let lastDeliveryAt = 0;
let sentFrom = Number.NEGATIVE_INFINITY;
let sentTo = Number.POSITIVE_INFINITY;

function onEvent(event: string, data: string, markReady: () => void): void {
  if (event === "run.token") {
    const now = wallClockMs();
    deliveries++;
    if (firstDeliveryAt === 0) firstDeliveryAt = now;
    lastDeliveryAt = now;
    const mark = data.indexOf(DELTA_MARK);
    if (mark === -1) return;
    const sentAt = Number.parseFloat(data.slice(mark + DELTA_MARK.length));
    if (sentAt >= sentFrom && sentAt <= sentTo) histogram.record(now - sentAt);
  } else if (event === "run.completed" || event === "run.failed") {
    completed++;
  } else if (event === "ready") {
    markReady();
  }
}

async function openAll(command: Extract<Command, { type: "open" }>): Promise<void> {
  let ready = 0;
  let failed = 0;
  let firstError: string | null = null;
  let next = 0;
  const openOne = async (subscription: Subscription) => {
    let resolveReady: () => void = () => {};
    const isReady = new Promise<void>((resolve) => {
      resolveReady = resolve;
    });
    const socket = await openSseSocket({
      host: command.host,
      port: command.port,
      path: subscription.path,
      headers: { authorization: `Bearer ${subscription.token}` },
      onEvent: (event, data) => onEvent(event, data, resolveReady),
      onClose: () => {
        closedConnections++;
        resolveReady();
      },
    });
    sockets.push(socket);
    const status = await socket.status;
    if (status !== 200) throw new Error(`HTTP ${status}`);
    await Promise.race([isReady, Bun.sleep(60_000)]);
  };
  const worker = async () => {
    while (next < command.subscriptions.length) {
      const subscription = command.subscriptions[next++]!;
      try {
        await openOne(subscription);
        ready++;
      } catch (error) {
        failed++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: command.parallelConnects ?? 64 }, worker));
  emit({ type: "opened", ready, failed, firstError, closed: closedConnections });
}

for await (const command of commands<Command>()) {
  if (command.type === "open") await openAll(command);
  else if (command.type === "reset") {
    histogram = new LatencyHistogram();
    deliveries = 0;
    completed = 0;
    firstDeliveryAt = 0;
    lastDeliveryAt = 0;
    sentFrom = command.sentFrom ?? Number.NEGATIVE_INFINITY;
    sentTo = command.sentTo ?? Number.POSITIVE_INFINITY;
    emit({ type: "reset-done" });
  } else if (command.type === "report") {
    emit({
      type: "report",
      deliveries,
      completed,
      closed: closedConnections,
      firstDeliveryAt,
      lastDeliveryAt,
      histogram: histogram.snapshot(),
    });
  } else if (command.type === "close") {
    for (const socket of sockets) socket.close();
    emit({ type: "closed" });
    exitProcess(0);
  }
}
