import type { CreateRunResponse } from "@promptrun/contract";
import { type UseMutationResult, useMutation } from "@tanstack/react-query";
import { usePromptrunBackend } from "./promptrun-provider.tsx";

/** The body the example backend's `POST /api/chat` (and `useChat`) sends by default. */
export interface ChatRunVariables {
  thread: string;
  channel?: string;
  message: string;
}

/**
 * A mutation that starts a run through the app's backend (which holds the API key).
 * `TVariables` is whatever that backend route accepts.
 */
export function useCreateRun<TVariables = ChatRunVariables>(): UseMutationResult<
  CreateRunResponse,
  Error,
  TVariables
> {
  const backend = usePromptrunBackend();
  return useMutation({ mutationFn: (variables: TVariables) => backend.createRun(variables) });
}
