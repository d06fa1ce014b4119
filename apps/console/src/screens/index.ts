/**
 * The console's screens and their paths (under /console), in the order of the navigation. One
 * file per screen; each screen reads the public API only (REST `/api/v1`, tRPC `/trpc`).
 */
import type { ComponentType } from "react";
import { CostsScreen } from "./costs-screen.tsx";
import { EnvironmentsScreen } from "./environments-screen.tsx";
import { PlaygroundScreen } from "./playground-screen.tsx";
import { PromptDetailScreen } from "./prompt-detail-screen.tsx";
import { PromptsScreen } from "./prompts-screen.tsx";
import { RunDetailScreen } from "./run-detail-screen.tsx";
import { RunsScreen } from "./runs-screen.tsx";
import { ThreadScreen } from "./thread-screen.tsx";
import { WebhooksScreen } from "./webhooks-screen.tsx";

// biome-ignore lint/suspicious/noExplicitAny: wouter passes route params to each screen as it reads them.
type Screen = { path: string; component: ComponentType<any> };

export const screens: Screen[] = [
  { path: "/playground", component: PlaygroundScreen },
  { path: "/playground/:slug", component: PlaygroundScreen },
  { path: "/prompts", component: PromptsScreen },
  { path: "/prompts/:slug", component: PromptDetailScreen },
  { path: "/runs", component: RunsScreen },
  { path: "/runs/:id", component: RunDetailScreen },
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
  { href: "/threads", label: "Threads" },
  { href: "/costs", label: "Costs" },
  { href: "/webhooks", label: "Webhooks" },
  { href: "/environments", label: "Environments & keys" },
];
