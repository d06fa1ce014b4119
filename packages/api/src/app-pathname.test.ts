import { expect, test } from "bun:test";
import { pathnameOf } from "./app.ts";

test("pathnameOf cuts plain paths and agrees with URL wherever URL would normalize", () => {
  const urls = [
    "http://127.0.0.1:3000/api/v1/prompts/greet/latest/runs",
    "http://h/api/v1/promptruns/abc?x=1#frag",
    "http://h/",
    "http://h",
    "http://h/stream/t?token=a/b",
    "http://h/api/v1/../v1/promptruns/x",
    "http://h/api/%761/promptruns",
    "http://h/a/./b",
    "http://[::1]:8080/health",
    "http://h/a\\b",
  ];
  for (const url of urls) expect(pathnameOf(url)).toBe(new URL(url).pathname);
});
