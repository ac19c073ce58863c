// The agent's JSON API (docs/API.md, "The web page's API"): every change goes through
// POST /api/call/<method>, the same methods and rules as the CLI; a method the session names
// as only reading is asked with GET (a browser that opens a new connection for every POST —
// WebKitGTK: a TLS handshake each on a phone — keeps one for these). A refusal is an
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

const hooks = { online: (_now) => {}, signedOut: () => {} };
/** A signal that aborts after `ms` (`AbortSignal.timeout`, which the checker's library lacks). */
const after = (ms) => /** @type {any} */ (AbortSignal).timeout(ms);
/** How long an answer may take (ms): an agent that does not answer by then is treated as
 * gone (a computer asleep or off the Wi-Fi drops packets, and nothing else would ever time
 * out). A phone's change meanwhile stays queued (offline.js); the banner and roaming follow. */
export const DEADLINE = 6000;
/** A session's start: short, so that a phone tries another agent soon. */
export const START_DEADLINE = 3000;
let csrf = null;
/** The methods this page's own agent lets it ask with GET (its session's `reads`). */
let reads = new Set();
/** A GET's query of at most this many characters; a longer one goes as a POST. */
const LONGEST_QUERY = 1500;
// Another agent of the household, used by a phone while its own does not answer: calls go to
// that agent's address with the phone's roaming credential (`Authorization: Bearer`), never a
// cookie (`{base, bearer, name}`; null: this page's own agent).
let via = null;

/** The `Authorization` header of a phone's roaming credential (an HTTP scheme, in no language). */
export const authorization = (bearer) => ["Bearer", bearer].join(" ");

/** Uses agent `agent` (`{base, bearer, name}`), or this page's own again (null). */
export function useAgent(agent) { via = agent; }
/** The other agent in use, if any. */
export const usingAgent = () => via;

/** What the page does when the agent stops answering, answers again, or signs it out. */
export function onConnection({ online, signedOut }) {
  if (online) hooks.online = online;
  if (signedOut) hooks.signedOut = signedOut;
}

/** `own`: this page's own agent, even while another is used; `ms`: the deadline of the whole
 * answer, its body included. */
export async function request(path, options = {}, own = false, ms = DEADLINE) {
  let response;
  let body;
  const other = own ? null : via;
  const signal = after(ms);
  try {
    response = other
      ? await fetch(other.base + path, {
        ...options, credentials: "omit", mode: "cors", signal,
        headers: { ...(options.headers || {}), Authorization: authorization(other.bearer) },
      })
      : await fetch(path, { credentials: "same-origin", ...options, signal });
    // An answer's body cut off (the connection lost while it came: a phone leaving the Wi-Fi)
    // is no answer, never an empty one: its `result` would be missing, and the page would show
    // and keep that (a phone's kept list without its items). Only a refusal may have no JSON.
    body = await response.json().catch((error) => { if (signal.aborted || response.ok) throw error; return {}; });
  } catch {
    // No answer, or none in time (the agent's computer asleep, off, or out of reach).
    hooks.online(false);
    throw new APIError("unreachable");
  }
  // An agent serving the household's apps (CalDAV) but not phones now (turned off there): as if
  // it did not answer — the page uses another that does.
  if (response.status === 503) { hooks.online(false); throw new APIError("unreachable"); }
  // Refused by another agent (the credential is older than a removal): not signed out here.
  if (response.status === 401 && other) throw new APIError("unreachable", {}, "unreachable", 401);
  if (response.status === 401) { hooks.signedOut(); throw new APIError("not_signed_in", {}, "not_signed_in", 401); }
  if (!response.ok) {
    const error = body.error && typeof body.error === "object" ? body.error : { code: "failed", params: { detail: `HTTP ${response.status}` } };
    throw new APIError(error.code, error.params || {}, error.message || error.code, response.status);
  }
  return body;
}

/** Signs this page in with its own agent: the token every POST carries. */
export async function startSession() {
  const session = await request("/api/session", {}, true, START_DEADLINE);
  csrf = session.csrf;
  reads = new Set(Array.isArray(session.reads) ? session.reads : []);
  return session;
}

/** Whether the household's agent at `base` answers the phone's `bearer` (a TLS exchange and
 * a session there), within `ms`. */
export async function reaches(base, bearer, ms = 3000) {
  try {
    const response = await fetch(`${base}/api/session`, {
      credentials: "omit", mode: "cors", headers: { Authorization: authorization(bearer) }, signal: after(ms),
    });
    return response.ok;
  } catch { return false; }
}

/** A phone whose cookie expired unused signs in again with its roaming credential, from its own
 * page: true when the household took it (a new cookie), false when it refused (the phone was
 * removed). */
export async function renewSession(bearer) {
  let response;
  try {
    response = await fetch("/api/session/renew", {
      method: "POST", credentials: "same-origin", headers: { Authorization: authorization(bearer) }, signal: after(DEADLINE),
    });
  } catch { throw new APIError("unreachable"); }
  if (response.status === 401) return false;
  if (!response.ok) throw new APIError("failed", { detail: `HTTP ${response.status}` }, "failed", response.status);
  return true;
}

export async function call(method, params = {}) {
  // No session yet (a phone opened offline, from what it last saw): as if no agent answered.
  if (csrf === null && !via) throw new APIError("unreachable");
  // Only this page's own agent: another one (a phone roaming) may be of an older release.
  const query = Object.keys(params).length ? `?params=${encodeURIComponent(JSON.stringify(params))}` : "";
  if (!via && reads.has(method) && query.length <= LONGEST_QUERY) {
    return (await request(`/api/call/${method}${query}`, { headers: { "X-Pulse-CSRF": csrf } })).result;
  }
  const body = await request(`/api/call/${method}`, {
    method: "POST",
    headers: via ? { "Content-Type": "application/json" } : { "Content-Type": "application/json", "X-Pulse-CSRF": csrf },
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

/** Signs out: on a phone, removes it from the household (a roaming phone asks the agent it
 *  uses, with its credential: no page token, which no other agent knows or allows). */
export async function logout() {
  await request("/api/logout", { method: "POST", headers: via ? {} : { "X-Pulse-CSRF": csrf } });
}
