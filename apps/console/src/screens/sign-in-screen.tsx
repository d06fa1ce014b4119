import { useState } from "react";
import { type SignedInTenant, signIn } from "../api/session.ts";
import { ErrorNotice } from "../components/notice.tsx";

/**
 * Sign-in with a tenant API key, exchanged once for a session cookie (HttpOnly: this page never
 * sees it); the key is dropped from the page's state as soon as the exchange is done.
 */
export function SignInScreen({ onSignedIn }: { onSignedIn: (tenant: SignedInTenant) => void }) {
  const [apiKey, setApiKey] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const tenant = await signIn(apiKey.trim());
      setApiKey("");
      onSignedIn(tenant);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="sign-in">
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to Promptrun</h1>
        <p>Paste an API key of your tenant. It is exchanged for a session and not kept in this browser.</p>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value)}
          required
        />
        {error !== null && <ErrorNotice error={error} />}
        <button type="submit" disabled={busy || apiKey.trim() === ""}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
