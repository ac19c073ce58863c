// The page's state store: what the agent said apart from what we guessed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Store, concerns } from "../../Sources/PulseWeb/Resources/store.js";

const deferred = () => { let resolve, reject; const promise = new Promise((a, b) => { resolve = a; reject = b; }); return { promise, resolve, reject }; };

test("a guess shows at once and stays until the agent's next answer after the call", async () => {
  const store = new Store();
  store.set("shop", ["Milk"]);
  const call = deferred();
  const guessed = store.guess("shop", (list) => [...list, "Eggs"], () => call.promise);
  assert.deepEqual(store.view("shop"), ["Milk", "Eggs"]);
  assert.deepEqual(store.agent("shop"), ["Milk"]);
  store.set("shop", ["Milk"]); // an answer from before the call settled: the guess stays
  assert.deepEqual(store.view("shop"), ["Milk", "Eggs"]);
  call.resolve("ok");
  assert.equal(await guessed, "ok");
  assert.ok(store.guessing("shop"));
  store.set("shop", ["Milk", "Eggs"]);
  assert.deepEqual(store.view("shop"), ["Milk", "Eggs"]);
  assert.ok(!store.guessing("shop"));
});

test("a refused guess is undone at once and the refusal reaches the caller", async () => {
  const store = new Store();
  store.set("tasks", [{ id: 1, done: false }]);
  const seen = [];
  store.subscribe((part) => seen.push(part));
  const refusal = Object.assign(new Error("focus"), { code: "focus_rule" });
  await assert.rejects(store.guess("tasks", (t) => t.map((x) => ({ ...x, done: true })), async () => { throw refusal; }),
    (error) => error.code === "focus_rule");
  assert.deepEqual(store.view("tasks"), [{ id: 1, done: false }]);
  assert.deepEqual(seen, ["tasks", "tasks"]);
});

test("guesses apply in order, and only to their part", () => {
  const store = new Store();
  store.set("a", 1);
  store.set("b", 10);
  store.guess("a", (v) => v + 1, () => new Promise(() => {}));
  store.guess("a", (v) => v * 3, () => new Promise(() => {}));
  assert.equal(store.view("a"), 6);
  assert.equal(store.view("b"), 10);
});

test("feed events reach the parts whose topics they concern", () => {
  assert.ok(concerns(["shopping.", "shopping_item"], { type: "shopping.added", entity: "shopping_item" }));
  assert.ok(concerns(["member"], { type: "household.changed", entity: "member" }));
  assert.ok(!concerns(["task.", "task"], { type: "shopping.checked", entity: "shopping_item" }));
  assert.ok(!concerns([], { type: "peer.connected" }));
  assert.ok(concerns(["peer.", "conflict"], { type: "conflict" }));
});

test("a feed event's change is shown at once under the open guesses, and a change that cannot say is nothing", () => {
  const store = new Store();
  store.set("shopping", { list: ["Milk"] });
  const seen = [];
  store.subscribe((part) => seen.push(part));
  store.guess("shopping", (s) => ({ list: [...s.list, "Tea (typed here)"] }), () => new Promise(() => {}));
  assert.equal(store.patch("shopping", (s) => ({ list: [...s.list, "Eggs"] })), true);
  assert.deepEqual(store.agent("shopping"), { list: ["Milk", "Eggs"] });
  assert.deepEqual(store.view("shopping"), { list: ["Milk", "Eggs", "Tea (typed here)"] }, "the guess stays on top");
  assert.equal(store.patch("shopping", () => undefined), false);
  assert.equal(store.patch("shopping", (s) => s), false, "the same answer: nothing drawn again");
  assert.deepEqual(seen, ["shopping", "shopping"]);
});

test("an answer asked for before a call settled keeps that call's guess, and a later one takes it", async () => {
  // The page's check-offs in a row: the reload after the first can be asked before the second's
  // call settles and arrive after it; the second must still show done (the all-done moment counts on it).
  const store = new Store();
  store.set("tasks", [{ id: 1, done: false }, { id: 2, done: false }]);
  const done = (id) => (tasks) => tasks.map((x) => (x.id === id ? { ...x, done: true } : x));
  await store.guess("tasks", done(1), async () => "ok");
  const reload = deferred();
  const loading = store.load("tasks", () => reload.promise);
  await store.guess("tasks", done(2), async () => "ok");
  reload.resolve([{ id: 1, done: true }, { id: 2, done: false }]);
  assert.equal(await loading, true);
  assert.deepEqual(store.view("tasks"), [{ id: 1, done: true }, { id: 2, done: true }]);
  assert.ok(store.guessing("tasks"));
  await store.load("tasks", async () => [{ id: 1, done: true }, { id: 2, done: true }]);
  assert.ok(!store.guessing("tasks"));
  assert.deepEqual(store.view("tasks"), [{ id: 1, done: true }, { id: 2, done: true }]);
});

test("an answer asked for before the one shown is dropped when it arrives after it", async () => {
  const store = new Store();
  const older = deferred();
  const newer = deferred();
  const first = store.load("shop", () => older.promise);
  const second = store.load("shop", () => newer.promise);
  newer.resolve(["Milk", "Eggs"]);
  assert.equal(await second, true);
  older.resolve(["Milk"]);
  assert.equal(await first, false);
  assert.deepEqual(store.view("shop"), ["Milk", "Eggs"]);
  store.set("shop", ["Bread"]); // an answer given now (the offline copy, an answer to a write) always shows
  assert.deepEqual(store.view("shop"), ["Bread"]);
});

test("an answer asked for before a feed event's change does not undo it when it arrives after it", async () => {
  // Two events in a row (an item added, then checked off): the reload after the first, asked
  // before the second arrived, may not hold the check-off; shown, it took the item back out of
  // the pool until the next reload, and a phone cut off meanwhile kept that copy.
  const store = new Store();
  store.set("shopping", { list: ["Oats"], pool: [] });
  const older = deferred();
  const first = store.load("shopping", () => older.promise);
  store.patch("shopping", () => ({ list: [], pool: ["Oats"] }));
  older.resolve({ list: ["Oats"], pool: [] });
  assert.equal(await first, false);
  assert.deepEqual(store.view("shopping"), { list: [], pool: ["Oats"] });
  assert.equal(await store.load("shopping", async () => ({ list: [], pool: ["Oats"] })), true, "the reload after the event shows");
});

test("loads asked beside the household's keep their answers only once the household's is kept, and after it fails too", async () => {
  // The page asks every part at once (page.js, loadAll); without the hold, the shopping list's
  // answer arriving first would be drawn before the household's settings (suggestions off).
  for (const outcome of ["answers", "fails"]) {
    const store = new Store();
    const order = [];
    store.subscribe((part) => order.push(part));
    const household = deferred();
    const first = store.load("household", () => household.promise);
    const others = store.after(first, () => [store.load("shopping", async () => ["Milk"]), store.load("tasks", async () => [])]);
    const later = store.load("backlog", async () => []); // begun after: not held
    await later;
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(order, ["backlog"], `${outcome}: nothing held is kept before the household's answer`);
    if (outcome === "answers") household.resolve({ name: "Home" }); else household.reject(new Error("gone"));
    await first.catch(() => {});
    assert.deepEqual(await Promise.all(others), [true, true]);
    assert.deepEqual(order, outcome === "answers" ? ["backlog", "household", "shopping", "tasks"] : ["backlog", "shopping", "tasks"]);
  }
});
