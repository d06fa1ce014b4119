import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { KnowledgeDocument } from "@promptrun/contract";
import { renderHook, waitFor } from "@testing-library/react";
import { createBackend } from "./backend.ts";
import { providerFor, waitOptions } from "./test-support/render.tsx";
import { useDocument, useKnowledgeSearch } from "./use-knowledge.ts";

setDefaultTimeout(20_000);

const DOC_ID = "0196f3c1-1f0e-7a3b-8b7c-1234567890ac";
const doc = (status: KnowledgeDocument["status"]): KnowledgeDocument => ({
  id: DOC_ID,
  knowledgeBase: "docs",
  externalId: null,
  filename: "a.pdf",
  mediaType: "application/pdf",
  metadata: {},
  status,
  error: status === "failed" ? "the PDF has no text layer" : null,
  bytes: 10,
  chunkCount: 0,
  tokens: 0,
  cost: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  readyAt: null,
});

/** The app's backend routes as createBackend calls them (happy-dom owns fetch here, as in backend.test.ts). */
function backendAnswering(answer: (url: string, init: RequestInit) => Response) {
  const requests: Array<{ url: string; method: string; body: unknown }> = [];
  const backend = createBackend({
    baseUrl: "/api",
    fetch: async (url, init) => {
      requests.push({
        url,
        method: init.method ?? "GET",
        body: init.body ? JSON.parse(String(init.body)) : null,
      });
      return answer(url, init);
    },
  });
  return { backend, requests };
}

describe("useDocument", () => {
  test("polls while pending and processing, stops once ready", async () => {
    const statuses: KnowledgeDocument["status"][] = ["pending", "processing", "processing", "ready"];
    const { backend, requests } = backendAnswering(() => Response.json(doc(statuses.shift() ?? "ready")));
    const { result } = renderHook(() => useDocument("docs", DOC_ID, { intervalMs: 20 }), {
      wrapper: providerFor(backend),
    });
    await waitFor(() => expect(result.current.data?.status).toBe("ready"), waitOptions);
    expect(requests[0]).toMatchObject({
      url: `/api/knowledge-bases/docs/documents/${DOC_ID}`,
      method: "GET",
    });
    const atReady = requests.length;
    expect(atReady).toBe(4);
    await Bun.sleep(150);
    expect(requests.length).toBe(atReady);
  });

  test("a failed document stops polling with its error; an unknown one is an error at once", async () => {
    const failing = backendAnswering(() => Response.json(doc("failed")));
    const { result } = renderHook(() => useDocument("docs", DOC_ID, { intervalMs: 20 }), {
      wrapper: providerFor(failing.backend),
    });
    await waitFor(() => expect(result.current.data?.error).toBe("the PDF has no text layer"), waitOptions);
    await Bun.sleep(100);
    expect(failing.requests).toHaveLength(1);
    const missing = backendAnswering(() =>
      Response.json({ error: "document not found", code: "not_found" }, { status: 404 }),
    );
    const gone = renderHook(() => useDocument("docs", DOC_ID), { wrapper: providerFor(missing.backend) });
    await waitFor(() => expect(gone.result.current.isError).toBe(true), waitOptions);
    expect(gone.result.current.error).toMatchObject({ status: 404, code: "not_found" });
    expect(missing.requests).toHaveLength(1);
  });

  test("does nothing without an id", () => {
    const { backend, requests } = backendAnswering(() => Response.json(doc("ready")));
    const { result } = renderHook(() => useDocument("docs", null), { wrapper: providerFor(backend) });
    expect(result.current.fetchStatus).toBe("idle");
    expect(requests).toHaveLength(0);
  });
});

describe("useKnowledgeSearch", () => {
  const hit = (text: string) => ({
    chunkId: "0196f3c1-1f0e-7a3b-8b7c-1234567890ad",
    documentId: DOC_ID,
    filename: "a.pdf",
    text,
    score: 0.5,
    metadata: {},
  });

  test("posts the query and options; a blank query sends nothing; a new query keeps the old results until it lands", async () => {
    const { backend, requests } = backendAnswering((_url, init) => {
      const { query } = JSON.parse(String(init.body)) as { query: string };
      return Response.json({ items: [hit(`about ${query}`)] });
    });
    let query = "  ";
    const { result, rerender } = renderHook(
      () => useKnowledgeSearch("docs", query, { topK: 3, mode: "keyword", filter: { team: "support" } }),
      { wrapper: providerFor(backend) },
    );
    expect(result.current.fetchStatus).toBe("idle");
    expect(requests).toHaveLength(0);
    query = "refund";
    rerender();
    await waitFor(() => expect(result.current.data?.items[0]?.text).toBe("about refund"), waitOptions);
    expect(requests[0]).toEqual({
      url: "/api/knowledge-bases/docs/search",
      method: "POST",
      body: { query: "refund", topK: 3, mode: "keyword", filter: { team: "support" } },
    });
    query = "shipping";
    rerender();
    expect(result.current.data?.items[0]?.text).toBe("about refund");
    await waitFor(() => expect(result.current.data?.items[0]?.text).toBe("about shipping"), waitOptions);
  });

  test("a backend without searchKnowledge is an error naming it", async () => {
    const backend = { ...backendAnswering(() => Response.json({})).backend, searchKnowledge: undefined };
    const { result } = renderHook(() => useKnowledgeSearch("docs", "x"), { wrapper: providerFor(backend) });
    await waitFor(() => expect(result.current.isError).toBe(true), waitOptions);
    expect(result.current.error?.message).toContain("searchKnowledge");
  });
});
