/**
 * The console's screens and their paths (under /console), in the order of the navigation. One
 * file per screen; each screen reads the public API only (REST `/api/v1`, tRPC `/trpc`).
 */
import { type ComponentType, lazy } from "react";

/**
 * Each screen is its own bundle chunk, loaded when first opened: the editor (CodeMirror) and the
 * charts (chart.js) cost nothing until their screen is shown (docs/console.md "Size and load time").
 */
// biome-ignore lint/suspicious/noExplicitAny: wouter passes route params to each screen as it reads them.
type AnyScreen = ComponentType<any>;
const screen = <K extends string>(load: () => Promise<Record<K, AnyScreen>>, name: K) =>
  lazy(async () => ({ default: (await load())[name] }));

const PlaygroundScreen = screen(() => import("./playground-screen.tsx"), "PlaygroundScreen");
const PromptsScreen = screen(() => import("./prompts-screen.tsx"), "PromptsScreen");
const PromptDetailScreen = screen(() => import("./prompt-detail-screen.tsx"), "PromptDetailScreen");
const RunsScreen = screen(() => import("./runs-screen.tsx"), "RunsScreen");
const RunDetailScreen = screen(() => import("./run-detail-screen.tsx"), "RunDetailScreen");
const WorkflowRunsScreen = screen(() => import("./workflow-runs-screen.tsx"), "WorkflowRunsScreen");
const WorkflowRunScreen = screen(() => import("./workflow-run-screen.tsx"), "WorkflowRunScreen");
const ThreadScreen = screen(() => import("./thread-screen.tsx"), "ThreadScreen");
const CostsScreen = screen(() => import("./costs-screen.tsx"), "CostsScreen");
const WebhooksScreen = screen(() => import("./webhooks-screen.tsx"), "WebhooksScreen");
const EnvironmentsScreen = screen(() => import("./environments-screen.tsx"), "EnvironmentsScreen");

type Screen = { path: string; component: AnyScreen };

export const screens: Screen[] = [
  { path: "/playground", component: PlaygroundScreen },
  { path: "/playground/:slug", component: PlaygroundScreen },
  { path: "/prompts", component: PromptsScreen },
  { path: "/prompts/:slug", component: PromptDetailScreen },
  { path: "/runs", component: RunsScreen },
  { path: "/runs/:id", component: RunDetailScreen },
  { path: "/workflow-runs", component: WorkflowRunsScreen },
  { path: "/workflow-runs/:id", component: WorkflowRunScreen },
  { path: "/threads", component: ThreadScreen },
  { path: "/threads/:id", component: ThreadScreen },
  { path: "/costs", component: CostsScreen },
  { path: "/webhooks", component: WebhooksScreen },
  { path: "/environments", component: EnvironmentsScreen },
];

export const navigation = [
  { href: "/playground", label: "Playground" },
  { href: "/prompts", label: "Prompts" },
  { href: "/runs", label: "Runs" },
  { href: "/workflow-runs", label: "Workflow runs" },
  { href: "/threads", label: "Threads" },
  { href: "/costs", label: "Costs" },
  { href: "/webhooks", label: "Webhooks" },
  { href: "/environments", label: "Environments & keys" },
];
