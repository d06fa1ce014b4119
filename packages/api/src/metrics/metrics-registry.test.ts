import { expect, test } from "bun:test";
import { createMetricsRegistry } from "./metrics-registry.ts";

test("HTTP requests are counted and timed by route template and status", async () => {
  const metrics = createMetricsRegistry();
  metrics.httpRequest({ method: "GET", route: "/api/v1/promptruns/:id", status: 200 }, 0.003);
  metrics.httpRequest({ method: "GET", route: "/api/v1/promptruns/:id", status: 200 }, 0.2);
  metrics.httpRequest({ method: "POST", route: "unmatched", status: 404 }, 0.001);
  const text = await metrics.text();
  expect(text).toContain(
    'promptrun_http_requests_total{method="GET",route="/api/v1/promptruns/:id",status="200"} 2',
  );
  expect(text).toContain('promptrun_http_requests_total{method="POST",route="unmatched",status="404"} 1');
  expect(text).toContain(
    'promptrun_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/v1/promptruns/:id",status="200"} 1',
  );
  expect(text).toContain(
    'promptrun_http_request_duration_seconds_count{method="GET",route="/api/v1/promptruns/:id",status="200"} 2',
  );
  expect(metrics.contentType).toStartWith("text/plain");
});

test("open streams gauge follows streamOpened/streamClosed", async () => {
  const metrics = createMetricsRegistry();
  metrics.streamOpened();
  metrics.streamOpened();
  metrics.streamClosed();
  expect(await metrics.text()).toContain("promptrun_sse_open_streams 1");
});

test("engine hooks report runs, provider calls and queue depth", async () => {
  const metrics = createMetricsRegistry();
  metrics.engine.runFinished("completed", "dev:echo", 1500);
  metrics.engine.runFinished("failed", "dev:echo", 10);
  metrics.engine.providerCall("openai:gpt-4o-mini", "error", 250);
  metrics.engine.queueDepth({ onsite: 1, normal: 7, low: 0 });
  const text = await metrics.text();
  expect(text).toContain('promptrun_runs_finished_total{outcome="completed",model="dev:echo"} 1');
  expect(text).toContain('promptrun_run_duration_seconds_sum{outcome="completed",model="dev:echo"} 1.5');
  expect(text).toContain('promptrun_provider_calls_total{model="openai:gpt-4o-mini",outcome="error"} 1');
  expect(text).toContain(
    'promptrun_provider_call_duration_seconds_sum{model="openai:gpt-4o-mini",outcome="error"} 0.25',
  );
  expect(text).toContain('promptrun_queue_depth{priority="normal"} 7');
});

test("registries are independent (no global state between apps)", async () => {
  const first = createMetricsRegistry();
  const second = createMetricsRegistry();
  first.streamOpened();
  expect(await second.text()).toContain("promptrun_sse_open_streams 0");
});
