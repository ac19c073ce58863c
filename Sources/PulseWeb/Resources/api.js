// The agent's JSON API (docs/API.md, "The web page's API"): every change goes through
// POST /api/call/<method>, the same methods and rules as the CLI. A refusal is an
// APIError with the agent's `code` and `params`: the page decides by the code, never by
// the message's words.

export class APIError extends Error {
  /** `status`: the HTTP status (422: the household refused; 0: no agent answered). */
  constructor(code, params = {}, message = code, status = 0) {
    super(message);
    this.code = code;
    this.params = params;
    this.status = status;
  }
}

const hooks = { online: () => {}, signedOut: () => {} };
let csrf = null;

/** What the page does when the agent stops answering, answers again, or signs it out. */
export function onConnection({ online, signedOut }) {
  if (online) hooks.online = online;
  if (signedOut) hooks.signedOut = signedOut;
}

export async function request(path, options = {}) {
  let response;
  try {
    response = await fetch(path, { credentials: "same-origin", ...options });
  } catch {
    hooks.online(false);
    throw new APIError("unreachable");
  }
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) { hooks.signedOut(); throw new APIError("not_signed_in", {}, "not_signed_in", 401); }
  if (!response.ok) {
    const error = body.error && typeof body.error === "object" ? body.error : { code: "failed", params: { detail: `HTTP ${response.status}` } };
    throw new APIError(error.code, error.params || {}, error.message || error.code, response.status);
  }
  return body;
}

/** Signs this page in: the token every POST carries. */
export async function startSession() {
  const session = await request("/api/session");
  csrf = session.csrf;
  return session;
}

export async function call(method, params = {}) {
  // No session yet (a phone opened offline, from what it last saw): as if no agent answered.
  if (csrf === null) throw new APIError("unreachable");
  const body = await request(`/api/call/${method}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Pulse-CSRF": csrf },
    body: JSON.stringify(params),
  });
  return body.result;
}

export const status = () => request("/api/status");

/** "Add a computer": a pairing code for another computer (`{code, expires, attempts}`). */
export async function invite(params = {}) {
  const body = await request("/api/invite", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Pulse-CSRF": csrf },
    body: JSON.stringify(params),
  });
  return body.result;
}

export async function logout() {
  await request("/api/logout", { method: "POST", headers: { "X-Pulse-CSRF": csrf } });
}
