import type { PromptrunBackend } from "./backend.ts";

/** The backend methods a hook may need that a hand-written backend may lack. */
type OptionalBackendMethod = {
  [Name in keyof PromptrunBackend]-?: undefined extends PromptrunBackend[Name] ? Name : never;
}[keyof PromptrunBackend];

/** `backend[name]` bound to it; throws (naming what to add) when the backend lacks it. */
export function requireBackendMethod<Name extends OptionalBackendMethod>(
  backend: PromptrunBackend,
  name: Name,
): NonNullable<PromptrunBackend[Name]> {
  const method = backend[name];
  if (!method) throw new Error(`the PromptrunBackend has no ${name}: add it (createBackend has one)`);
  return method.bind(backend) as NonNullable<PromptrunBackend[Name]>;
}
