import type { ApiDeps } from "../deps.ts";

/** What a REST handler receives: the request, its decoded path parameters and the app's dependencies. */
export interface RestContext {
  request: Request;
  params: Record<string, string>;
  deps: ApiDeps;
}

export type RestHandler = (context: RestContext) => Promise<Response>;
