/**
 * A small route table. Patterns are `/`-separated segments; `:name` captures one segment
 * (percent-decoded; left raw when the encoding is invalid, which every validator then refuses)
 * and a final `*` matches any rest. Method `*` accepts every method.
 */
export interface Route<Handler> {
  method: string;
  pattern: string;
  handler: Handler;
}

export type RouteMatch<Handler> =
  | { kind: "found"; route: Route<Handler>; params: Record<string, string> }
  | { kind: "method_not_allowed"; pattern: string; allow: string[] }
  | { kind: "not_found" };

interface CompiledRoute<Handler> {
  route: Route<Handler>;
  segments: string[];
  rest: boolean;
}

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function matchSegments(
  patternSegments: string[],
  rest: boolean,
  pathSegments: string[],
): Record<string, string> | null {
  if (rest ? pathSegments.length < patternSegments.length : pathSegments.length !== patternSegments.length) {
    return null;
  }
  const params: Record<string, string> = {};
  for (const [index, patternSegment] of patternSegments.entries()) {
    const pathSegment = pathSegments[index] ?? "";
    if (patternSegment.startsWith(":")) params[patternSegment.slice(1)] = decodeSegment(pathSegment);
    else if (patternSegment !== pathSegment) return null;
  }
  return params;
}

export class Router<Handler> {
  readonly #routes: CompiledRoute<Handler>[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    const rest = pattern.endsWith("/*");
    const segments = (rest ? pattern.slice(0, -2) : pattern).split("/");
    this.#routes.push({ route: { method, pattern, handler }, segments, rest });
    return this;
  }

  /** Finds the route for a method and a raw (still percent-encoded) path. HEAD falls back to GET. */
  match(method: string, path: string): RouteMatch<Handler> {
    const pathSegments = path.split("/");
    const allow = new Set<string>();
    let matchedPattern: string | null = null;
    for (const { route, segments, rest } of this.#routes) {
      const params = matchSegments(segments, rest, pathSegments);
      if (params === null) continue;
      if (route.method === "*" || route.method === method || (method === "HEAD" && route.method === "GET")) {
        return { kind: "found", route, params };
      }
      matchedPattern ??= route.pattern;
      allow.add(route.method);
      if (route.method === "GET") allow.add("HEAD");
    }
    if (matchedPattern === null) return { kind: "not_found" };
    return { kind: "method_not_allowed", pattern: matchedPattern, allow: [...allow] };
  }
}
