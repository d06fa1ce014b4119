import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createContext, type ReactNode, useContext, useState } from "react";
import { type CreateBackendOptions, createBackend, type PromptrunBackend } from "./backend.ts";

const BackendContext = createContext<PromptrunBackend | null>(null);

/** Props of {@link PromptrunProvider}. */
export interface PromptrunProviderProps {
  /** The app's backend: a ready {@link PromptrunBackend}, or the options of `createBackend`. */
  backend: PromptrunBackend | CreateBackendOptions;
  /** Share the app's QueryClient; a private one is created otherwise. */
  queryClient?: QueryClient;
  children: ReactNode;
}

const isBackend = (value: PromptrunProviderProps["backend"]): value is PromptrunBackend =>
  "createRun" in value && typeof value.createRun === "function";

/** Makes the app's backend and a QueryClient available to the Promptrun hooks. */
export function PromptrunProvider({ backend, queryClient, children }: PromptrunProviderProps) {
  // Created once per provider: a new client or backend per render would drop every cache and stream.
  const [ownQueryClient] = useState(() => queryClient ?? new QueryClient());
  const [resolvedBackend] = useState(() => (isBackend(backend) ? backend : createBackend(backend)));
  return (
    <QueryClientProvider client={queryClient ?? ownQueryClient}>
      <BackendContext.Provider value={resolvedBackend}>{children}</BackendContext.Provider>
    </QueryClientProvider>
  );
}

/** The backend given to the nearest {@link PromptrunProvider}; throws outside one. */
export function usePromptrunBackend(): PromptrunBackend {
  const backend = useContext(BackendContext);
  if (!backend) throw new Error("Promptrun hooks must be used inside <PromptrunProvider>");
  return backend;
}
