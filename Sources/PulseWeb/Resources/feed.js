// The live feed (GET /api/events, Server-Sent Events): what changed anywhere in the
// household. Each event reloads the parts whose topics it concerns.
import { request } from "./api.js";
import { partsConcerned, refresh, notify, loadAll } from "./page.js";
import { showNotice } from "./notices.js";

let events = null;
let everOnline = false;

export function connectFeed({ online, isOnline, fail }) {
  events = new EventSource("/api/events");
  events.addEventListener("hello", (message) => {
    const hello = JSON.parse(message.data);
    const missed = !isOnline() || hello.gap;
    online(true);
    if (missed && everOnline) loadAll().catch(fail); // missed changes: reload what is shown
    everOnline = true;
  });
  // A phone's notifications (the agent sends them to phones only: notices.js).
  events.addEventListener("notice", (message) => showNotice(JSON.parse(message.data)));
  events.onmessage = (message) => {
    const event = JSON.parse(message.data);
    const concerned = partsConcerned(event);
    refresh(...(concerned.length ? concerned.map((p) => p.id) : ["household", "status"]));
    notify(event);
  };
  events.onerror = () => {
    online(false);
    if (events.readyState === EventSource.CLOSED) {
      // The browser gave up (e.g. the agent answered 401 after a restart): try again later.
      request("/api/session").then(() => setTimeout(() => connectFeed({ online, isOnline, fail }), 1000))
        .catch(() => setTimeout(() => connectFeed({ online, isOnline, fail }), 3000));
    }
  };
}

export function closeFeed() { if (events) { events.close(); events = null; } }
