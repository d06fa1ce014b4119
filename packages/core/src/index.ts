export * from "./config.ts";
export * from "./engine-port.ts";
export * from "./errors.ts";
export * from "./ports.ts";
export * from "./security/secret-box.ts";
export * from "./security/url-guard.ts";
export * from "./services.ts";
export * from "./templating/template.ts";
