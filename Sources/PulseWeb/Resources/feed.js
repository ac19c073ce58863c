// The live feed (GET /api/events, Server-Sent Events): what changed anywhere in the
// household. Each event is shown at once where it alone says what changed, and reloads the
// parts whose topics it concerns (page.js, `received`).
import { request, usingAgent, authorization } from "./api.js";
import { received, loadAll, settled } from "./page.js";
import { stillCurrent } from "./offline.js";
import { showNotice } from "./notices.js";

let events = null;
let stream = null; // the feed of another agent (a phone whose own does not answer)
let everOnline = false;

/** An agent writes a `ping` on every live feed as often as its `hello` says (every 2 s):
 * nothing at all for SILENCE (its `hello` included) and the agent is gone, though no
 * connection says so (a computer asleep, switched off or off the Wi-Fi drops packets
 * silently). Then the feed is closed and the page says it is offline. An agent whose hello
 * names no ping (an older release) is trusted to stay until its connection ends. */
export const SILENCE = 5000;
/** How long silence means "gone" for an agent that pings every `ping` ms (null: never). */
export const silenceFor = (ping) => (Number.isFinite(ping) && ping > 0 ? Math.max(SILENCE, 2 * ping + 1000) : null);
let silence = null;
let retry = null;
let allowed = SILENCE;
function heard(onSilent) {
  clearTimeout(silence);
  if (allowed !== null) silence = setTimeout(onSilent, allowed);
}

/** One event of the feed: `hello`, a phone's `notice`, or a household event. */
function handle(type, data, { online, isOnline, fail }) {
  if (type === "hello") {
    const hello = JSON.parse(data);
    allowed = silenceFor(hello.ping);
    const missed = !isOnline() || hello.gap;
    online(true);
    if (missed && everOnline) loadAll().catch(fail); // missed changes: reload what is shown
    everOnline = true;
  } else if (type === "ping") {
    // The agent is there (heard() was called for it): a phone's copy is as of now, unless a
    // change is being reloaded.
    if (settled()) stillCurrent();
  } else if (type === "notice") {
    showNotice(JSON.parse(data)); // a phone's notifications (the agent sends them to phones only: notices.js)
  } else {
    received(JSON.parse(data));
  }
}

/**
 * `lost`: another agent's feed ended (that agent went too).
 * @param {{ online: (now: boolean) => void, isOnline: () => boolean, fail: (error: any) => void, lost?: () => void }} hooks
 */
export function connectFeed({ online, isOnline, fail, lost }) {
  closeFeed();
  const other = usingAgent();
  if (other) { streamFrom(other, { online, isOnline, fail, lost }); return; }
  const source = new EventSource("/api/events");
  events = source;
  const again = (ms) => { clearTimeout(retry); retry = setTimeout(() => connectFeed({ online, isOnline, fail, lost }), ms); };
  // Silence: the agent is gone without a word. The page is offline until it answers again
  // (a phone tries the household's other agents meanwhile: main.js).
  const silent = () => {
    if (events !== source) return;
    source.close();
    events = null;
    online(false);
    again(1000);
  };
  const hear = (type) => (message) => {
    if (events !== source) return;
    handle(type, message.data, { online, isOnline, fail }); // a hello sets how long silence may last
    heard(silent);
  };
  allowed = SILENCE; // until the hello says
  heard(silent);
  source.addEventListener("hello", hear("hello"));
  source.addEventListener("ping", hear("ping"));
  source.addEventListener("notice", hear("notice"));
  source.onmessage = hear("message");
  source.onerror = () => {
    if (events !== source) return;
    online(false);
    if (source.readyState === EventSource.CLOSED) {
      // The browser gave up (e.g. the agent answered 401 after a restart): try again later.
      clearTimeout(silence);
      request("/api/session").then(() => again(1000)).catch(() => again(3000));
    }
  };
}

/** Another agent's feed, read with the phone's roaming credential (an EventSource cannot
 * send one): the same Server-Sent Events, parsed here. */
async function streamFrom(other, hooks) {
  const controller = new AbortController();
  stream = controller;
  // The agent's ping comes every 2 s: nothing for SILENCE (its answer's head included), it
  // is gone (silently).
  let silent = null;
  let limit = SILENCE; // until its hello says
  const watch = () => { clearTimeout(silent); if (limit !== null) silent = setTimeout(() => controller.abort(), limit); };
  watch();
  try {
    const response = await fetch(`${other.base}/api/events`, {
      credentials: "omit", mode: "cors", headers: { Authorization: authorization(other.bearer) }, signal: controller.signal,
    });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      watch();
      if (done) { clearTimeout(silent); break; }
      buffer += value;
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = "message";
        let data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) type = line.slice(6).trim();
          else if (line.startsWith("data:")) data += line.slice(5).trim();
        }
        if (!data) continue;
        if (type === "hello") { try { limit = silenceFor(JSON.parse(data).ping); } catch { /* handled below */ } watch(); }
        handle(type, data, hooks);
      }
    }
  } catch { /* closed here, or the agent went */ }
  clearTimeout(silent);
  if (stream === controller) { stream = null; hooks.lost?.(); }
}

export function closeFeed() {
  clearTimeout(silence);
  clearTimeout(retry);
  if (events) { events.close(); events = null; }
  if (stream) { const open = stream; stream = null; open.abort(); }
}
