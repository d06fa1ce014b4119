import { describe, expect, test } from "bun:test";
import { Router } from "./router.ts";

const router = new Router<string>()
  .add("GET", "/api/v1/promptruns/:id", "get-run")
  .add("POST", "/api/v1/promptruns/:id/cancel", "cancel")
  .add("POST", "/api/v1/prompts/:slug/:version/runs", "create")
  .add("*", "/trpc/*", "trpc");

describe("Router", () => {
  test("captures and percent-decodes parameters", () => {
    const match = router.match("POST", "/api/v1/prompts/gr%C3%BC%C3%9Fe/..%2F..%2Fetc/runs");
    expect(match).toEqual({
      kind: "found",
      route: { method: "POST", pattern: "/api/v1/prompts/:slug/:version/runs", handler: "create" },
      params: { slug: "grüße", version: "../../etc" },
    });
  });

  test("leaves an invalid percent-encoding raw instead of throwing", () => {
    const match = router.match("GET", "/api/v1/promptruns/%E0%A4%A");
    expect(match.kind === "found" && match.params.id).toBe("%E0%A4%A");
  });

  test("wrong method gives the allowed ones; HEAD is allowed where GET is", () => {
    expect(router.match("DELETE", "/api/v1/promptruns/x")).toEqual({
      kind: "method_not_allowed",
      pattern: "/api/v1/promptruns/:id",
      allow: ["GET", "HEAD"],
    });
    expect(router.match("HEAD", "/api/v1/promptruns/x").kind).toBe("found");
    expect(router.match("GET", "/api/v1/promptruns/x/cancel")).toMatchObject({ allow: ["POST"] });
  });

  test("unknown paths, extra and missing segments are not found", () => {
    expect(router.match("GET", "/api/v1/promptruns").kind).toBe("not_found");
    expect(router.match("GET", "/api/v1/promptruns/a/b/c").kind).toBe("not_found");
    expect(router.match("GET", "/api/v1/promptruns/a/").kind).toBe("not_found");
    expect(router.match("GET", "/nope").kind).toBe("not_found");
  });

  test("a rest pattern matches any method and any deeper path, but not its bare prefix's sibling", () => {
    expect(router.match("PATCH", "/trpc/run.get").kind).toBe("found");
    expect(router.match("GET", "/trpc/a/b").kind).toBe("found");
    expect(router.match("GET", "/trpcx/a").kind).toBe("not_found");
  });
});
