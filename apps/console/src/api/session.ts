import { ConsoleApiError, consoleFetch } from "./console-fetch.ts";

/** The react-query key of the signed-in tenant (null: signed out, the sign-in page shows). */
export const SESSION_QUERY_KEY = ["console-session"] as const;

export interface SignedInTenant {
  id: string;
  name: string;
}

const errorOf = async (response: Response): Promise<ConsoleApiError> => {
  const body = (await response.json().catch(() => null)) as { error?: string } | null;
  return new ConsoleApiError(response.status, body?.error ?? `HTTP ${response.status}`);
};

/** The signed-in tenant, or null when the session cookie is absent or no longer valid. */
export async function currentSession(): Promise<SignedInTenant | null> {
  const response = await consoleFetch("/console/session");
  if (response.status === 401) return null;
  if (!response.ok) throw await errorOf(response);
  return ((await response.json()) as { tenant: SignedInTenant }).tenant;
}

/** Exchanges the key for a session cookie; the key is not kept anywhere in the browser. */
export async function signIn(apiKey: string): Promise<SignedInTenant> {
  const response = await consoleFetch("/console/session", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey }),
  });
  if (!response.ok) throw await errorOf(response);
  return ((await response.json()) as { tenant: SignedInTenant }).tenant;
}

export async function signOut(): Promise<void> {
  const response = await consoleFetch("/console/session", { method: "DELETE" });
  if (!response.ok && response.status !== 401) throw await errorOf(response);
}
