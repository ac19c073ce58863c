// The reload behind a live update (page.js): an event the page showed from itself alone (live.js)
// is confirmed by reloading its part once the feed is quiet, a burst of such events by one reload
// at its end; an event it could not show, or showed other than as the agent will (`exact`),
// reloads its part at once, as before; and no reload waits
// longer than GATHER_AT_MOST after the first change it gathers. Run in node, the page's timers mocked.
import { test, mock } from "node:test";
import assert from "node:assert/strict";

globalThis.window = { matchMedia: () => ({ matches: false, addEventListener() {} }) };
globalThis.HTMLElement = class {};
globalThis.HTMLInputElement = class extends globalThis.HTMLElement {};
globalThis.document = { activeElement: null, addEventListener() {}, body: { classList: { contains: () => false } } };
const { reloadAt, received, register, store, SOON, QUIET, GATHER_AT_MOST } = await import("../../Sources/PulseWeb/Resources/page.js");

test("when a gathered reload runs: soon for a part that needs it, once quiet for a confirmation, never past the most", () => {
  const cases = [
    // [what, when, at]
    ["a part that needs it: soon", { now: 1000, wait: SOON }, 1000 + SOON],
    ["a confirmation: once the feed is quiet", { now: 1000, wait: QUIET }, 1000 + QUIET],
    ["a confirmation keeps a reload a part needs when it is due", { now: 1000, wait: QUIET, pending: 1010, needed: true, since: 990 }, 1010],
    ["a confirmation pushes another confirmation back", { now: 1000, wait: QUIET, pending: 1200, since: 700 }, 1000 + QUIET],
    ["a part that needs it comes sooner than a confirmation due", { now: 1000, wait: SOON, pending: 1400, since: 900 }, 1000 + SOON],
    ["an event of a burst pushes a reload back, as before", { now: 1000, wait: SOON, pending: 1010, needed: true, since: 900 }, 1000 + SOON],
    ["a busy feed: never later than the most after the first change", { now: 5000, wait: QUIET, pending: 5100, since: 3000 }, 3000 + GATHER_AT_MOST],
    ["a busy feed, a part that needs it: the most too", { now: 4990, wait: SOON, pending: 5000, needed: true, since: 3000 }, 3000 + GATHER_AT_MOST],
  ];
  for (const [what, when, at] of cases) assert.equal(reloadAt(when), at, what);
});

// A part as shopping.js registers itself: its loads counted, what an event changes said by `after`.
const loads = [];
register({
  id: "things", topics: ["thing."], load: async () => { loads.push(Date.now()); store.set("things", ["Milk", "Eggs"]); }, render() {},
  after: (things, event) => (event.type === "thing.added" && Array.isArray(things) ? [...things, event.title] : undefined),
  exact: (event) => !event.placed,
});
store.set("things", ["Milk"]);

test("an event the page showed is reloaded once the feed is quiet; one it could not show, at once", () => {
  mock.timers.enable({ apis: ["setTimeout", "Date"] });
  try {
    loads.length = 0;
    received({ type: "thing.added", row: "r1", title: "Eggs" });
    assert.deepEqual(store.view("things"), ["Milk", "Eggs"], "shown at once, from the event");
    mock.timers.tick(SOON + 1);
    assert.equal(loads.length, 0, "not reloaded at once: it is shown");
    mock.timers.tick(QUIET);
    assert.equal(loads.length, 1, "reloaded once the feed was quiet");

    received({ type: "thing.renamed", row: "r1", title: "Oats" }); // live.js cannot say: reloaded at once
    mock.timers.tick(SOON + 1);
    assert.equal(loads.length, 2, "an event the page could not show: reloaded at once");

    received({ type: "thing.added", row: "r2", title: "Flour", placed: true }); // shown, but the agent places it
    assert.equal(store.view("things").at(-1), "Flour", "shown at once, from the event");
    mock.timers.tick(SOON + 1);
    assert.equal(loads.length, 3, "an event shown other than as the agent's answer will be (`exact`): reloaded at once");
  } finally {
    mock.timers.reset();
  }
});

test("a burst of events the page showed is reloaded once, at its end", () => {
  mock.timers.enable({ apis: ["setTimeout", "Date"] });
  try {
    loads.length = 0;
    store.set("things", ["Milk"]);
    for (let i = 0; i < 8; i += 1) {
      received({ type: "thing.added", row: `b${i}`, title: `Item ${i}` });
      mock.timers.tick(100);
    }
    assert.equal(store.view("things").length, 9, "each shown as it came");
    assert.equal(loads.length, 0, "no reload during the burst");
    mock.timers.tick(QUIET);
    assert.equal(loads.length, 1, "one reload at its end");

    // A feed busy for longer than GATHER_AT_MOST: reloaded by then all the same.
    loads.length = 0;
    for (let i = 0; i < 30; i += 1) {
      received({ type: "thing.added", row: `c${i}`, title: `Other ${i}` });
      mock.timers.tick(100);
    }
    assert.equal(loads.length, Math.floor(3000 / GATHER_AT_MOST), "reloaded once every GATHER_AT_MOST while the burst lasted");
  } finally {
    mock.timers.reset();
  }
});
