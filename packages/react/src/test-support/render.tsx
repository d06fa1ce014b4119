import { QueryClient } from "@tanstack/react-query";
import type { ReactNode } from "react";
import type { PromptrunBackend } from "../backend.ts";
import { PromptrunProvider } from "../promptrun-provider.tsx";
import type { ChatRunVariables } from "../use-create-run.ts";
import type { FakeServerHandle } from "./fake-server.ts";

/** Generous: a loaded 2-core machine is slow, and these waits end as soon as the condition holds. */
export const waitOptions = { timeout: 10_000, interval: 10 };

/** A fresh provider per test: its own QueryClient, the given backend. */
export function providerFor(backend: PromptrunBackend) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  return ({ children }: { children: ReactNode }) => (
    <PromptrunProvider backend={backend} queryClient={queryClient}>
      {children}
    </PromptrunProvider>
  );
}

/**
 * What the fake backend's `createWorkflowRun` takes: the fake runs one step per string of
 * `steps` (ids `step_1`, …), each scripted like a chat message (`fail:` fails it).
 */
export interface WorkflowRunVariables {
  workflow?: string;
  thread?: string;
  steps: string[];
}

/** Stands in for the app's backend: holds the API key and talks to the fake Promptrun. */
export function fakeBackend(fake: FakeServerHandle, options: { delayMs?: number } = {}) {
  const calls = {
    createRun: [] as unknown[],
    getStreamToken: 0,
    getRun: 0,
    submitToolOutputs: [] as unknown[],
    getWorkflowRun: 0,
  };
  const backend: PromptrunBackend = {
    createRun(variables) {
      calls.createRun.push(variables);
      const { thread, channel, message } = variables as ChatRunVariables;
      return fake.client.runs.create("chat", "latest", {
        inputs: { message, delayMs: options.delayMs ?? 5 },
        thread,
        ...(channel ? { channel } : {}),
      });
    },
    getStreamToken(thread) {
      calls.getStreamToken += 1;
      return fake.client.threads.createStreamToken(thread);
    },
    getRun(id) {
      calls.getRun += 1;
      return fake.client.runs.get(id);
    },
    submitToolOutputs(runId, toolOutputs) {
      calls.submitToolOutputs.push({ runId, toolOutputs });
      return fake.client.runs.submitToolOutputs(runId, toolOutputs);
    },
    createWorkflowRun(variables) {
      const { workflow, thread, steps } = variables as WorkflowRunVariables;
      return fake.client.workflowRuns.create(workflow ?? "flow", {
        inputs: { steps, delayMs: options.delayMs ?? 5 },
        ...(thread ? { thread } : {}),
      });
    },
    getWorkflowRun(id) {
      calls.getWorkflowRun += 1;
      return fake.client.workflowRuns.get(id);
    },
  };
  return { backend, calls };
}
