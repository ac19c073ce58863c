// A feed event shown at once (live.js, issue 54): what each event does to the part that shows
// it, and when the event alone cannot say (the part is then only reloaded).
import { test } from "node:test";
import assert from "node:assert/strict";
import { shoppingAfter, tasksAfter } from "../../Sources/PulseWeb/Resources/live.js";

const milk = { id: "m", name: "Milk", state: "active", listed: 1 };
const eggs = { id: "e", name: "Eggs", state: "active", listed: 2 };
const bread = { id: "b", name: "Bread", state: "restock", listed: 5 };
const shown = { list: [milk, eggs], pool: [bread] };
const ev = (type, row, more = {}) => ({ type, entity: "shopping_item", row, time: 9, count: 1, ...more });
const names = (s) => ({ list: s.list.map((x) => x.name), pool: s.pool.map((x) => x.name) });

test("an item added on another computer is shown at the end of the list, under the agent's id and name", () => {
  const after = shoppingAfter(shown, ev("shopping.added", "t", { title: "Tea" }));
  assert.deepEqual(names(after), { list: ["Milk", "Eggs", "Tea"], pool: ["Bread"] });
  assert.deepEqual(after.list[2], { id: "t", name: "Tea", state: "active", listed: 9 });
});

test("an addition already shown (a reload was faster) changes nothing", () => {
  assert.equal(shoppingAfter(shown, ev("shopping.added", "m", { title: "Milk" })), shown);
});

test("a checked item leaves the list and heads the restock pool", () => {
  assert.deepEqual(names(shoppingAfter(shown, ev("shopping.checked", "m"))), { list: ["Eggs"], pool: ["Milk", "Bread"] });
  assert.equal(shoppingAfter(shown, ev("shopping.checked", "m")).pool[0].state, "restock");
});

test("a restocked item leaves the pool and goes to the end of the list", () => {
  assert.deepEqual(names(shoppingAfter(shown, ev("shopping.restocked", "b"))), { list: ["Milk", "Eggs", "Bread"], pool: [] });
  assert.equal(shoppingAfter(shown, ev("shopping.restocked", "b")).list[2].state, "active");
});

test("a renamed item keeps its place under its new name, on the list or in the pool", () => {
  assert.deepEqual(names(shoppingAfter(shown, ev("shopping.renamed", "e", { title: "Free-range eggs" }))),
    { list: ["Milk", "Free-range eggs"], pool: ["Bread"] });
  assert.deepEqual(names(shoppingAfter(shown, ev("shopping.renamed", "b", { title: "Rye bread" }))),
    { list: ["Milk", "Eggs"], pool: ["Rye bread"] });
});

test("a removed item leaves wherever it is shown; one not shown changes nothing", () => {
  assert.deepEqual(names(shoppingAfter(shown, ev("shopping.removed", "e"))), { list: ["Milk"], pool: ["Bread"] });
  assert.deepEqual(names(shoppingAfter(shown, ev("shopping.removed", "b"))), { list: ["Milk", "Eggs"], pool: [] });
  assert.equal(shoppingAfter(shown, ev("shopping.removed", "zz")), shown);
});

test("what the event alone cannot say is left to the reload", () => {
  const cannot = [
    ["a summary of many additions (a catch-up)", ev("shopping.added", "t", { title: "Tea", count: 40 })],
    ["a summary with no row", { type: "shopping.checked", count: 3 }],
    ["an addition with no name", ev("shopping.added", "t")],
    ["a check of a row not shown", ev("shopping.checked", "zz")],
    ["a restock of a row not shown", ev("shopping.restocked", "zz")],
    ["a rename of a row not shown", ev("shopping.renamed", "zz", { title: "X" })],
    ["an undo (a row back with no new place)", { type: "changed", entity: "shopping_item", row: "m", count: 1 }],
  ];
  for (const [what, event] of cannot) assert.equal(shoppingAfter(shown, event), undefined, what);
  assert.equal(shoppingAfter(undefined, ev("shopping.added", "t", { title: "Tea" })), undefined, "nothing loaded yet");
});

test("the part given is never changed in place (the store keeps the agent's answer apart)", () => {
  const before = JSON.stringify(shown);
  for (const type of ["shopping.added", "shopping.checked", "shopping.restocked", "shopping.renamed", "shopping.removed"]) {
    shoppingAfter(shown, ev(type, type === "shopping.added" ? "t" : "m", { title: "Tea" }));
  }
  assert.equal(JSON.stringify(shown), before);
});

test("a task done, reopened or removed elsewhere is shown so at once; an addition or a new assignee is reloaded", () => {
  const tasks = [{ id: "1", title: "Bins", done: false }, { id: "2", title: "Plants", done: true }];
  const task = (type, row, more = {}) => ({ type, entity: "task", row, count: 1, ...more });
  assert.deepEqual(tasksAfter(tasks, task("task.done", "1")).map((x) => x.done), [true, true]);
  assert.deepEqual(tasksAfter(tasks, task("task.reopened", "2")).map((x) => x.done), [false, false]);
  assert.deepEqual(tasksAfter(tasks, task("task.removed", "1")).map((x) => x.id), ["2"]);
  assert.equal(tasksAfter(tasks, task("task.removed", "9")), tasks);
  assert.equal(tasksAfter(tasks, task("task.done", "9")), undefined);
  assert.equal(tasksAfter(tasks, task("task.added", "3", { title: "New" })), undefined);
  assert.equal(tasksAfter(tasks, task("task.assigned", "1", { assignee: "member-id" })), undefined);
  assert.equal(tasksAfter(tasks, task("task.done", "1", { count: 5 })), undefined);
  assert.equal(tasks[0].done, false, "not changed in place");
});

test("an item added during a trip carries the agent's listed reading, so it is marked for the shopper in the same frame", () => {
  // Readings beyond 2⁵³ come as exact decimal strings (the API's and the feed's); trip.js
  // compares them as BigInts with the trip's start.
  const started = "116500000000000001";
  const later = "116500000000000002"; // one tick later: a Number cannot tell them apart
  assert.equal(Number(later), Number(started));
  const after = shoppingAfter(shown, ev("shopping.added", "t", { title: "Tea", listed: later }));
  assert.equal(after.list[2].listed, later);
  assert.ok(BigInt(after.list[2].listed) > BigInt(started), "added while out");
  assert.equal(shoppingAfter(shown, ev("shopping.restocked", "b", { listed: later })).list[2].listed, later, "a restock too");
  assert.equal(shoppingAfter(shown, ev("shopping.added", "t", { title: "Tea" })).list[2].listed, 9, "an older agent's event: its time");
});
