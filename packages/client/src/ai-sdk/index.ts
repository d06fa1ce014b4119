export * from "./promptrun-chat-transport.ts";
