export * from "./scripted-model.ts";
export * from "./start-promptrun.ts";
