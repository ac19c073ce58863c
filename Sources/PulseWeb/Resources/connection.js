// The page's connection to its household, as a state machine (issue 55): which agent the page
// uses and what it says of it. main.js tells it what happened — `next(state, event)` — and
// carries out the actions it returns, in order. Nothing here touches the page, the network or
// a timer, so every transition is table-tested under node (Tests/page/connection.test.mjs).
//
// Modes:
//   starting    nothing known yet (the page just opened)
//   own         this page's own agent answered
//   offline     no agent answers (a phone shows what it last saw, and keeps its changes)
//   roaming     a phone using its own agent at another address, or another agent of the household
//   signed-out  an agent said no (a removed phone, an expired cookie, a sign-out here)
//   welcome     this computer has no household yet
//
// `online`: whether the agent in use answers now (its feed, its calls); `phone`: the phone app
// (known from its session, or from the copy it opened with); `via`: the agent in use while
// roaming (`{base, name, self}`), else null; `removedHere`: signed out on this page (then no
// way back is kept).

/**
 * @typedef {{ base: string, name: string, self: boolean }} Agent
 * @typedef {{ mode: "starting" | "own" | "offline" | "roaming" | "signed-out" | "welcome", online: boolean,
 *   phone: boolean, via: Agent | null, removedHere: boolean }} State
 * @typedef {{ type: string, [detail: string]: any }} Event
 * @typedef {{ do: string, [detail: string]: any }} Action
 */

/** @type {Readonly<State>} */
export const initial = Object.freeze({ mode: "starting", online: true, phone: false, via: null, removedHere: false });

/** How long to wait before asking this page's own agent again (ms), by what just happened. */
export const RETRY = Object.freeze({
  unanswered: 2000, // the own agent did not answer a session's start
  roamed: 2000, // another address or agent answers: the own one, again and again, meanwhile
  notFound: 500, // none answered either: soon
  otherLost: 1000, // the agent roamed to went too
});

/**
 * The state after `event`, and the actions to carry out (objects with a `do`, in order).
 *
 * Events: `{type: "answered", phone, welcome}` (the own agent gave a session),
 * `{type: "unanswered"}` (it did not), `{type: "copy-shown"}` (a phone opened with what it last
 * saw), `{type: "online", now, queued}` (the agent in use answers again, or fell silent;
 * `queued`: changes waiting to be sent), `{type: "found", agent}` (a search found `agent`
 * answering: `{base, name, self}`), `{type: "not-found", unknown}` (none did; `unknown`: an agent
 * this page may not connect to yet), `{type: "other-lost"}` (the roamed-to agent's feed ended),
 * `{type: "signed-out", here}` (an agent said no; `here`: the person signed out on this page).
 *
 * Actions: `leave-other` (back to this page's own agent: the other's feed closed), `banner`
 * (draw `banner(state)`), `welcome`, `household` (`phone`: show the household from this page's
 * agent: its data, its feed), `use-other` (`agent`: show it from that agent, its changes kept
 * meanwhile sent), `send-queue`, `search` (ask every other address and agent at once: answered
 * by `found` or `not-found`), `retry` (`ms`: ask the own agent again then), `offline-shown`
 * (a phone's copy shown with no agent: its changes are kept), `queue-offline` (changes wait from
 * now on), `reload-for-new-agents`, `signed-out` (`keepWayBack`: keep the phone's credential for
 * one tap's way back).
 * @param {Readonly<State>} state
 * @param {Event} event
 * @returns {{ state: Readonly<State>, actions: Action[] }}
 */
export function next(state, event) {
  const actions = [];
  const act = (action) => actions.push(action);
  const s = { ...state };
  switch (event.type) {
    case "answered": {
      if (s.mode === "signed-out") break; // a later answer does not undo a no
      if (s.via) { s.via = null; act({ do: "leave-other" }); act({ do: "banner" }); }
      if (event.welcome) { s.mode = "welcome"; act({ do: "welcome" }); break; }
      s.mode = "own";
      s.phone = Boolean(event.phone);
      act({ do: "household", phone: s.phone });
      break;
    }
    case "unanswered": {
      if (s.mode === "signed-out") break;
      // Using another agent already: it serves until this page's own answers again.
      if (s.via) { act({ do: "retry", ms: RETRY.unanswered }); break; }
      s.online = false;
      s.mode = "offline";
      act({ do: "banner" });
      if (s.phone) act({ do: "search" });
      act({ do: "retry", ms: RETRY.unanswered });
      break;
    }
    case "copy-shown":
      s.phone = true;
      break;
    case "online": {
      if (s.mode === "signed-out") break;
      if (event.now) {
        if (s.phone && event.queued) act({ do: "send-queue" });
        s.online = true;
        if (s.mode === "offline" && !s.via) s.mode = "own"; // its feed answers again
        act({ do: "banner" });
        break;
      }
      s.online = false;
      act({ do: "banner" });
      // A phone whose agent fell silent while the app was open (silent for seconds already: the
      // feed's pings, or a call's deadline): its own at another address or another agent at once.
      if (s.phone && !s.via) act({ do: "search" });
      break;
    }
    case "found": {
      if (s.mode === "signed-out" || s.via) break; // one agent at a time
      s.mode = "roaming";
      s.via = { base: event.agent.base, name: event.agent.name, self: Boolean(event.agent.self) };
      s.online = true;
      act({ do: "use-other", agent: s.via });
      act({ do: "retry", ms: RETRY.roamed });
      break;
    }
    case "not-found": {
      if (s.mode === "signed-out" || s.via) break;
      if (event.unknown) act({ do: "reload-for-new-agents" });
      if (s.mode === "offline" && s.phone) act({ do: "offline-shown" });
      act({ do: "retry", ms: RETRY.notFound });
      break;
    }
    case "other-lost": {
      if (!s.via) break;
      s.via = null;
      s.mode = "offline";
      s.online = false;
      act({ do: "leave-other" });
      act({ do: "queue-offline" });
      act({ do: "banner" });
      if (s.phone) act({ do: "search" });
      act({ do: "retry", ms: RETRY.otherLost });
      break;
    }
    case "signed-out": {
      if (event.here) s.removedHere = true;
      s.mode = "signed-out";
      s.via = null;
      act({ do: "signed-out", keepWayBack: !s.removedHere });
      break;
    }
    default:
      throw new Error(`connection: unknown event ${event.type}`);
  }
  return { state: Object.freeze(s), actions };
}

/**
 * What the banner says in `state`: hidden, or a message key with its parameters, and whether it
 * is calm (nothing is wrong: the phone's own computer at another address). `evictable`: how
 * many changes wait on a phone whose browser deletes them after a week without a visit (an
 * iPhone's, the app opened outside the Home Screen: offline.js `outsideHomeScreen`): with no
 * computer in reach, the banner says to open the app at home within the week. `copy`: how old
 * the phone's copy is (offline.js `copyAge`: `{at, from}`, Unix ms and the computer it came
 * from): a phone with no computer in reach says it too ("List as of 17:02, from Kitchen PC"),
 * with the day when it is not `now`'s.
 * @param {Readonly<State>} state
 * @param {{ evictable?: number, copy?: { at: number, from: string | null } | null, now?: number }} device
 * @returns {{ hidden: boolean, calm?: boolean, key?: string, params?: object, copy?: { key: string, at: number, from: string | null, today: boolean } }}
 */
export function banner(state, { evictable = 0, copy = null, now = Date.now() } = {}) {
  if (state.mode === "signed-out") return { hidden: true }; // one answered, and said no
  const other = state.via;
  if (other) return { hidden: false, calm: Boolean(other.self), key: other.self ? "page.offline.moved" : "page.offline.roaming", params: { name: other.name || "?" } };
  if (state.online) return { hidden: true };
  const said = { hidden: false, calm: false, key: state.phone ? "page.offline.phone" : "page.offline", params: {} };
  // A phone keeps what is changed meanwhile (offline.js): it says so, not "not saved".
  if (state.phone && evictable > 0) Object.assign(said, { key: "page.offline.phone.week", params: { count: evictable } });
  if (state.phone && copy && Number.isFinite(copy.at)) {
    const today = new Date(copy.at).toDateString() === new Date(now).toDateString();
    said.copy = { key: copy.from ? "page.offline.copy" : "page.offline.copy.unnamed", at: copy.at, from: copy.from || null, today };
  }
  return said;
}
