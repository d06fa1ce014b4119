export { createDevEchoModel, type DevEchoOptions } from "./dev-echo-model.ts";
export { assertKnownModel, knownProviders, type ProviderConfig } from "./known-providers.ts";
export {
  createModelGateway,
  type ModelGateway,
  type ModelGatewayOptions,
  type ModelRequest,
  type ResolvedModel,
} from "./model-gateway.ts";
export { type ModelRef, parseModelRef } from "./model-ref.ts";
export { tokenUsageFromProvider, tokenUsageFromSdk } from "./token-usage.ts";
