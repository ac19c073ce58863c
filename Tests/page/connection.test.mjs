// The page's connection as a state machine (connection.js): every transition the phone and page
// tests walk in a browser (web_phones.py, web_phone_faults.py, web_e2e.py), here as tables.
import { test } from "node:test";
import assert from "node:assert/strict";
import { initial, next, banner, RETRY } from "../../Sources/PulseWeb/Resources/connection.js";

/** Runs `events` from `state`: the last state, and every action in order (their `do` and what matters). */
function walk(events, state = initial) {
  const done = [];
  for (const event of events) {
    const step = next(state, event);
    state = step.state;
    done.push(...step.actions.map((a) => [a.do, a.ms ?? a.phone ?? a.agent?.name ?? a.keepWayBack].filter((x) => x !== undefined).join(" ")));
  }
  return { state, done };
}

const kitchen = { base: "https://10.0.0.2:8443", name: "Kitchen laptop", self: false };
const ownElsewhere = { base: "https://study.local:8443", name: "Study PC", self: true };

test("a computer's page: its agent answers, falls silent and comes back; it never searches for another", () => {
  const { state, done } = walk([
    { type: "answered", phone: false },
    { type: "online", now: true },
    { type: "online", now: false },
  ]);
  assert.deepEqual(done, ["household false", "banner", "banner"]);
  assert.deepEqual(banner(state), { hidden: false, calm: false, key: "page.offline", params: {} });
  const back = walk([{ type: "online", now: true, queued: true }], state); // a computer keeps no queue
  assert.deepEqual(back.done, ["banner"]);
  assert.deepEqual(banner(back.state), { hidden: true });
});

test("a phone whose computer falls silent uses another computer of the household, then its own again", () => {
  const running = walk([{ type: "answered", phone: true }, { type: "online", now: true }]).state;
  const silent = walk([{ type: "online", now: false }], running);
  assert.deepEqual(silent.done, ["banner", "search"]);
  assert.equal(banner(silent.state).key, "page.offline.phone");

  const found = walk([{ type: "found", agent: kitchen }], silent.state);
  assert.equal(found.state.mode, "roaming");
  assert.deepEqual(found.done, ["use-other Kitchen laptop", `retry ${RETRY.roamed}`]);
  assert.deepEqual(banner(found.state), { hidden: false, calm: false, key: "page.offline.roaming", params: { name: "Kitchen laptop" } });

  // Its own still silent: asked again and again, the other serving meanwhile.
  const still = walk([{ type: "online", now: false }, { type: "unanswered" }], found.state);
  assert.deepEqual(still.done, ["banner", `retry ${RETRY.unanswered}`]);
  assert.equal(still.state.mode, "roaming");
  assert.equal(banner(still.state).key, "page.offline.roaming");
  // A second search's answer is not a second agent.
  assert.deepEqual(walk([{ type: "found", agent: ownElsewhere }], still.state).done, []);

  const home = walk([{ type: "answered", phone: true }], still.state);
  assert.deepEqual(home.done, ["leave-other", "banner", "household true"]);
  assert.equal(home.state.mode, "own");
  assert.equal(home.state.via, null);
});

test("a phone paired by its computer's old address uses the same computer at its new one, calmly", () => {
  const { state } = walk([{ type: "answered", phone: true }, { type: "online", now: false }, { type: "found", agent: ownElsewhere }]);
  assert.deepEqual(banner(state), { hidden: false, calm: true, key: "page.offline.moved", params: { name: "Study PC" } });
});

test("a phone opened with no agent in reach shows what it last saw and keeps its changes", () => {
  const { state, done } = walk([{ type: "copy-shown" }, { type: "unanswered" }, { type: "not-found", unknown: false }]);
  assert.deepEqual(done, ["banner", "search", `retry ${RETRY.unanswered}`, "offline-shown", `retry ${RETRY.notFound}`]);
  assert.equal(state.mode, "offline");
  assert.equal(banner(state).key, "page.offline.phone");
  // Its agent answers: the household from it, and what waited is sent when its feed answers.
  const back = walk([{ type: "answered", phone: true }, { type: "online", now: true, queued: true }], state);
  assert.deepEqual(back.done, ["household true", "send-queue", "banner"]);
  assert.deepEqual(banner(back.state), { hidden: true });
});

test("a computer's page with no agent says so and asks again, without searching", () => {
  const { state, done } = walk([{ type: "unanswered" }, { type: "unanswered" }]);
  assert.deepEqual(done, ["banner", `retry ${RETRY.unanswered}`, "banner", `retry ${RETRY.unanswered}`]);
  assert.equal(banner(state).key, "page.offline");
});

test("when the computer roamed to goes too, the phone keeps its changes and searches again", () => {
  const roaming = walk([{ type: "answered", phone: true }, { type: "online", now: false }, { type: "found", agent: kitchen }]).state;
  const { state, done } = walk([{ type: "other-lost" }], roaming);
  assert.deepEqual(done, ["leave-other", "queue-offline", "banner", "search", `retry ${RETRY.otherLost}`]);
  assert.equal(state.via, null);
  assert.equal(banner(state).key, "page.offline.phone");
  assert.deepEqual(walk([{ type: "other-lost" }], state).done, [], "lost once");
});

test("signed out by an agent keeps the phone's way back; signed out on the page keeps none", () => {
  const byAgent = walk([{ type: "answered", phone: true }, { type: "signed-out" }]);
  assert.deepEqual(byAgent.done, ["household true", "signed-out true"]);
  assert.deepEqual(banner(byAgent.state), { hidden: true });
  const here = walk([{ type: "answered", phone: true }, { type: "signed-out", here: true }, { type: "signed-out" }]);
  assert.deepEqual(here.done, ["household true", "signed-out false", "signed-out false"]);
  // Nothing afterwards undoes a no: answers, silences and searches change nothing.
  const after = walk([{ type: "answered", phone: true }, { type: "unanswered" }, { type: "online", now: false },
    { type: "found", agent: kitchen }, { type: "not-found", unknown: true }], here.state);
  assert.deepEqual(after.done, []);
  assert.equal(after.state.mode, "signed-out");
});

test("a roaming phone signed out by its own agent drops the other one", () => {
  const roaming = walk([{ type: "answered", phone: true }, { type: "online", now: false }, { type: "found", agent: kitchen }]).state;
  const { state } = walk([{ type: "signed-out" }], roaming);
  assert.equal(state.via, null);
  assert.deepEqual(banner(state), { hidden: true });
});

test("a computer with no household welcomes; an agent this page may not use yet reloads it", () => {
  assert.deepEqual(walk([{ type: "answered", welcome: true }]).done, ["welcome"]);
  const { done } = walk([{ type: "copy-shown" }, { type: "online", now: false }, { type: "not-found", unknown: true }]);
  assert.deepEqual(done, ["banner", "search", "reload-for-new-agents", `retry ${RETRY.notFound}`]);
});

test("a phone whose feed answers again after a gap in the offline mode is its own agent's again", () => {
  const { state } = walk([{ type: "answered", phone: true }, { type: "unanswered" }, { type: "online", now: true }]);
  assert.equal(state.mode, "own");
  assert.deepEqual(banner(state), { hidden: true });
});

test("states are never changed in place, and an unknown event is a mistake", () => {
  const step = next(initial, { type: "answered", phone: true });
  assert.equal(initial.mode, "starting");
  assert.ok(Object.isFrozen(step.state));
  assert.throws(() => next(initial, { type: "teleported" }), /unknown event teleported/);
});

test("a phone whose browser deletes what waits after a week unseen says so while changes wait and no computer is in reach", () => {
  const running = walk([{ type: "answered", phone: true }, { type: "online", now: true }]).state;
  const silent = walk([{ type: "online", now: false }], running).state;
  const rows = [
    // [what, state, changes waiting on such a phone, the banner's key (null: hidden), its count]
    ["nothing waits", silent, 0, "page.offline.phone", undefined],
    ["two wait", silent, 2, "page.offline.phone.week", 2],
    ["another computer in use: the changes go there", walk([{ type: "found", agent: kitchen }], silent).state, 2, "page.offline.roaming", undefined],
    ["a computer's page keeps no queue", walk([{ type: "answered", phone: false }, { type: "online", now: false }]).state, 2, "page.offline", undefined],
    ["in reach: no banner", running, 2, null, undefined],
  ];
  for (const [what, state, evictable, key, count] of rows) {
    const said = banner(state, { evictable });
    assert.equal(said.hidden ? null : said.key, key, what);
    assert.equal(said.params?.count, count, what);
  }
});

test("a phone with no computer in reach says how old its list is and where it came from, with the day when not today", () => {
  const { state } = walk([{ type: "copy-shown" }, { type: "unanswered" }]);
  const now = new Date(2026, 11, 4, 18, 30).getTime();
  const copy = { at: new Date(2026, 11, 4, 17, 2).getTime(), from: "Kitchen PC" };
  assert.deepEqual(banner(state, { copy, now }).copy, { key: "page.offline.copy", at: copy.at, from: "Kitchen PC", today: true });
  assert.equal(banner(state, { copy, now: new Date(2026, 11, 5, 8, 0).getTime() }).copy.today, false, "the next morning: with its day");
  assert.equal(banner(state, { copy: { at: copy.at, from: null }, now }).copy.key, "page.offline.copy.unnamed", "a copy kept before names were");
  assert.equal(banner(state, { copy, evictable: 2, now }).key, "page.offline.phone.week", "the week's warning stays");
  assert.ok(banner(state, { copy, evictable: 2, now }).copy, "and the age is said with it");
  assert.equal(banner(state, { now }).copy, undefined, "nothing kept: no age");
  // Not said where the list shown is live: a computer's own page, a phone using another computer.
  assert.equal(banner(walk([{ type: "unanswered" }]).state, { copy, now }).copy, undefined);
  const roaming = walk([{ type: "answered", phone: true }, { type: "online", now: false }, { type: "found", agent: kitchen }]).state;
  assert.equal(banner(roaming, { copy, now }).copy, undefined);
  assert.equal(banner(walk([{ type: "answered", phone: true }]).state, { copy, now }).hidden, true);
});
