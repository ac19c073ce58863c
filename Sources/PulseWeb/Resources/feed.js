// The live feed (GET /api/events, Server-Sent Events): what changed anywhere in the
// household. Each event reloads the parts whose topics it concerns.
import { request, usingAgent, authorization } from "./api.js";
import { partsConcerned, refresh, notify, loadAll } from "./page.js";
import { showNotice } from "./notices.js";

let events = null;
let stream = null; // the feed of another agent (a phone whose own does not answer)
let everOnline = false;

/** One event of the feed: `hello`, a phone's `notice`, or a household event. */
function handle(type, data, { online, isOnline, fail }) {
  if (type === "hello") {
    const hello = JSON.parse(data);
    const missed = !isOnline() || hello.gap;
    online(true);
    if (missed && everOnline) loadAll().catch(fail); // missed changes: reload what is shown
    everOnline = true;
  } else if (type === "notice") {
    showNotice(JSON.parse(data)); // a phone's notifications (the agent sends them to phones only: notices.js)
  } else {
    const event = JSON.parse(data);
    const concerned = partsConcerned(event);
    refresh(...(concerned.length ? concerned.map((p) => p.id) : ["household", "status"]));
    notify(event);
  }
}

/** `lost`: another agent's feed ended (that agent went too). */
export function connectFeed({ online, isOnline, fail, lost }) {
  const other = usingAgent();
  if (other) { streamFrom(other, { online, isOnline, fail, lost }); return; }
  events = new EventSource("/api/events");
  events.addEventListener("hello", (message) => handle("hello", message.data, { online, isOnline, fail }));
  events.addEventListener("notice", (message) => handle("notice", message.data, { online, isOnline, fail }));
  events.onmessage = (message) => handle("message", message.data, { online, isOnline, fail });
  events.onerror = () => {
    online(false);
    if (events.readyState === EventSource.CLOSED) {
      // The browser gave up (e.g. the agent answered 401 after a restart): try again later.
      request("/api/session").then(() => setTimeout(() => connectFeed({ online, isOnline, fail }), 1000))
        .catch(() => setTimeout(() => connectFeed({ online, isOnline, fail }), 3000));
    }
  };
}

/** Another agent's feed, read with the phone's roaming credential (an EventSource cannot
 * send one): the same Server-Sent Events, parsed here. */
async function streamFrom(other, hooks) {
  const controller = new AbortController();
  stream = controller;
  try {
    const response = await fetch(`${other.base}/api/events`, {
      credentials: "omit", mode: "cors", headers: { Authorization: authorization(other.bearer) }, signal: controller.signal,
    });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    // The agent's heartbeat comes every 25 s: nothing for a minute, it is gone (silently).
    let silent = null;
    const watch = () => { clearTimeout(silent); silent = setTimeout(() => controller.abort(), 60_000); };
    watch();
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
        if (data) handle(type, data, hooks);
      }
    }
  } catch { /* closed here, or the agent went */ }
  if (stream === controller) { stream = null; hooks.lost?.(); }
}

export function closeFeed() {
  if (events) { events.close(); events = null; }
  if (stream) { const open = stream; stream = null; open.abort(); }
}
