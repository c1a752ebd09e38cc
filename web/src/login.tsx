import { useState } from "preact/hooks";
import { ApiError, api } from "./api";

/** The login: the API token, sent once; the service answers with an HttpOnly session cookie. */
export function Login({ onDone }: { onDone: () => void }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.post("/api/v1/login", { body: { token: token.trim() } });
      setToken("");
      onDone();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? "That is not the API token." : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="login">
      <form onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">segops</h1>
        <p>This service needs its API token (the file given to --api-token-file).</p>
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="current-password"
          required
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          aria-describedby={error ? "login-error" : undefined}
        />
        <button type="submit" disabled={busy || token.trim() === ""}>
          Log in
        </button>
        {error && (
          <p id="login-error" class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
