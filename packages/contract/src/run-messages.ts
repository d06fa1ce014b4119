import { z } from "zod";
import { runMemorySchema } from "./run.ts";
import { chatMessageSchema } from "./thread-messages.ts";

/**
 * `GET /api/v1/promptruns/{id}/messages` and tRPC `run.messages` (docs/PRODUCT-RULES.md "Run
 * messages"): what the run's first model call was sent, rendered again from what the run stored.
 */
export const runMessagesSchema = z
  .object({
    messages: z.array(chatMessageSchema).meta({
      description:
        "In send order: the prompt's system messages, the thread history the run carried, then its rendered user/assistant messages. Every `{{env.NAME}}` shows as `[env:NAME]`. The later model calls of a tool run are in the run's `steps`.",
    }),
    memory: runMemorySchema.nullable().meta({
      description:
        "The run's `memory`: the history messages it carried (those between the system messages and its own) and those left out. Null while the run is pending (it is recorded when the run ends; the history shown is what the run would carry now) and for a run that ended without recording it.",
    }),
  })
  .meta({
    id: "RunMessages",
    description:
      "The messages a run sent to its model, rendered from its stored inputs with env var values masked.",
  });
export type RunMessages = z.infer<typeof runMessagesSchema>;
