export * from "./fake-promptrun-server.ts";
