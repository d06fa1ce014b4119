/** The react-query key of a run: `useRun` reads it, `useThreadStream` invalidates it when the run ends. */
export const runQueryKey = (id: string) => ["promptrun", "run", id] as const;
