// A phone's queue (offline.js, issue 42): what a queued change shows, the answer it stands
// for, and sending the queue in order, stopping where no agent answers and dropping what
// the household refused for good. And the service worker's list of the app's files is the
// page's modules. `node --test Tests/page`, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { applyQueued, resultOf, sendAll, idsGiven, remap } from "../../Sources/PulseWeb/Resources/offline.js";
import { APIError } from "../../Sources/PulseWeb/Resources/api.js";
import { SHELL, cacheable } from "../../Sources/PulseWeb/Resources/sw.js";

const milk = { id: "m", name: "Milk", state: "active" };
const eggs = { id: "e", name: "Eggs", state: "restock" };
const shopping = { list: [milk], pool: [eggs] };

test("a queued addition shows its items under the ids it will have, once", () => {
  const op = { method: "shop.add", params: { names: ["Jam", "Tea"], ids: ["j", "t"] } };
  const once = applyQueued(shopping, op);
  assert.deepEqual(once.list.map((x) => x.id), ["m", "j", "t"]);
  assert.deepEqual(applyQueued(once, op), once, "the same addition again changes nothing");
  assert.deepEqual(resultOf(op, shopping).map((x) => x.id), ["j", "t"]);
  assert.deepEqual(shopping.list, [milk], "the snapshot itself is not changed");
});

test("a queued check and restock move the item, and again change nothing", () => {
  const checked = applyQueued(shopping, { method: "shop.check", params: { item: "m", once: true } });
  assert.deepEqual([checked.list, checked.pool.map((x) => [x.id, x.state])], [[], [["m", "restock"], ["e", "restock"]]]);
  assert.deepEqual(applyQueued(checked, { method: "shop.check", params: { item: "m", once: true } }).pool.length, 2);
  const back = applyQueued(shopping, { method: "shop.restock", params: { item: "e", once: true } });
  assert.deepEqual(back.list.map((x) => [x.id, x.state]), [["m", "active"], ["e", "active"]]);
  assert.equal(resultOf({ method: "shop.restock", params: { item: "e" } }, shopping).state, "active");
  assert.deepEqual(applyQueued(shopping, { method: "shop.check", params: { item: "gone" } }), shopping);
});

test("a queued edit shows the item's new quantity and note at once, on the list or in the pool, and again changes nothing", () => {
  const op = { method: "shop.edit", params: { item: "m", quantity: " 3 ", note: "the lactose-free one", was: { quantity: null, note: null } } };
  const edited = applyQueued(shopping, op);
  assert.deepEqual(edited.list, [{ ...milk, quantity: "3", note: "the lactose-free one" }]);
  assert.deepEqual(applyQueued(edited, op), edited, "the same edit again");
  const cleared = applyQueued(edited, { method: "shop.edit", params: { item: "m", note: "" } });
  assert.deepEqual(cleared.list, [{ ...milk, quantity: "3" }], "an emptied note is cleared, the quantity left");
  assert.equal(applyQueued(shopping, { method: "shop.edit", params: { item: "e", quantity: "6" } }).pool[0].quantity, "6");
  assert.deepEqual(resultOf(op, shopping), { ...milk, quantity: "3", note: "the lactose-free one" });
  assert.deepEqual(shopping.list, [milk], "the snapshot itself is not changed");
});

test("the queue goes in order, stops where no agent answers, and drops what was refused for good", async () => {
  const queue = ["a", "b", "c", "d"].map((id) => ({ id, method: "shop.check", params: { item: id } }));
  const sent = [];
  const result = await sendAll(queue, async (method, params) => {
    sent.push(params.item);
    if (params.item === "b") throw new APIError("not_found", {}, "not_found", 422);
    if (params.item === "c") throw new APIError("unreachable");
  });
  assert.deepEqual(sent, ["a", "b", "c"]);
  assert.deepEqual(result.left.map((op) => op.id), ["c", "d"]);
  assert.deepEqual(result.refused.map((r) => [r.op.id, r.code]), [["b", "not_found"]]);
  const refusedTokens = await sendAll(result.left, async () => { throw new APIError("missing_token", {}, "", 403); });
  assert.deepEqual(refusedTokens.left.map((op) => op.id), ["c", "d"], "a page's own trouble never drops a change");
  const later = await sendAll(result.left, async () => {});
  assert.deepEqual(later.left, []);
});

test("the service worker caches every module of the page and never the API", () => {
  // The modules are the agent's, written in place of the placeholder as it serves the worker
  // (WebAssets.serviceWorker, from the files of the folder: WebTests checks the served list
  // against the folder); every other file of the shell is served.
  assert.deepEqual(SHELL.filter((path) => path.endsWith(".js")), ["/house-pulse-modules.js"]);
  const router = readFileSync(new URL("../../Sources/PulseWeb/WebRouter.swift", import.meta.url), "utf8");
  for (const path of SHELL.filter((path) => !path.endsWith(".js"))) {
    assert.ok(path === "/" || router.includes(`"${path}"`), `${path} is served by the agent`);
  }
  const origin = "https://house.local:47655";
  const url = (path) => new URL(path, origin);
  assert.equal(cacheable(url("/main.js"), "GET", origin), true);
  assert.equal(cacheable(url("/messages/pl.json"), "GET", origin), true);
  for (const path of ["/api/session", "/api/events", "/pair?token=x", "/ca.crt"]) assert.equal(cacheable(url(path), "GET", origin), false, path);
  assert.equal(cacheable(url("/main.js"), "POST", origin), false);
  assert.equal(cacheable(new URL("/main.js", "https://elsewhere.local"), "GET", origin), false);
});

// A model of the agent's shopping rules for queued changes (Household.addShoppingItems(_:ids:),
// checkShoppingItem(_:once:), restockShoppingItem(_:once:)): a name in the restock pool (any
// case) comes back under the pool item's id, the phone's id kept by a deleted row that answers
// as the item it brought back while that item is where the addition put it.
class Agent {
  constructor(items) { this.rows = new Map(items.map((x, i) => [x.id, { ...x, listed: i }])); this.next = 100; }
  live(state) { return [...this.rows.values()].filter((x) => x.state === state); }
  answer(x) { return { id: x.id, name: x.name, state: x.state }; }
  call(method, params) {
    if (method === "shop.add") {
      const taken = new Set();
      return params.names.map((name, i) => {
        const id = params.ids[i];
        const known = this.rows.get(id);
        if (known) {
          const back = known.state === "deleted" && [...this.rows.values()].find((x) => x.state !== "deleted" && x.id !== id
            && x.name.toLowerCase() === known.name.toLowerCase() && x.listed === known.listed);
          return this.answer(back || known);
        }
        const listed = this.next++;
        const back = this.live("restock").find((x) => x.name.toLowerCase() === name.toLowerCase() && !taken.has(x.id));
        if (back) {
          taken.add(back.id);
          Object.assign(back, { state: "active", listed });
          this.rows.set(id, { id, name, state: "deleted", listed });
          return this.answer(back);
        }
        this.rows.set(id, { id, name, state: "active", listed });
        return this.answer(this.rows.get(id));
      });
    }
    const [from, to] = method === "shop.check" ? ["active", "restock"] : ["restock", "active"];
    const item = this.rows.get(params.item);
    if (params.once && item?.state === to) return this.answer(item);
    if (!item || item.state !== from) throw new APIError("not_found", {}, "not_found", 422);
    Object.assign(item, { state: to, listed: this.next++ });
    return this.answer(item);
  }
  names(state) { return this.live(state).map((x) => x.name).sort(); }
}

// Offline on a phone: the person's taps on one name, as the queue records them (each tap
// names what the phone shows: applyQueued), then sent, each change twice (its answer lost once).
const sequences = [
  // [what the household has, the taps, the list and the pool meant]
  ["Milk in the pool: add Milk, check it", { pool: ["Milk"] }, ["add Milk", "check Milk"], [[], ["Milk"]]],
  ["Milk in the pool: add it, check it, restock it", { pool: ["Milk"] }, ["add Milk", "check Milk", "restock Milk"], [["Milk"], []]],
  ["Milk in the pool: add milk (any case)", { pool: ["Milk"] }, ["add milk"], [["Milk"], []]],
  ["Milk on the list: check it, add it again, check it", { list: ["Milk"] }, ["check Milk", "add Milk", "check Milk"], [[], ["Milk"]]],
  ["nothing: add Milk, check it, restock it, check it", {}, ["add Milk", "check Milk", "restock Milk", "check Milk"], [[], ["Milk"]]],
  ["nothing: add Milk twice in a row", {}, ["add Milk", "check Milk", "add Milk"], [["Milk"], []]],
  ["Milk in the pool: restock it from the pool, check it", { pool: ["Milk"] }, ["restock Milk", "check Milk"], [[], ["Milk"]]],
];

for (const [what, household, taps, meant] of sequences) {
  test(`offline taps on one name apply once, as meant: ${what}`, async () => {
    const items = [...(household.list || []).map((name) => ({ id: `l-${name}`, name, state: "active" })),
      ...(household.pool || []).map((name) => ({ id: `p-${name}`, name, state: "restock" }))];
    const agent = new Agent(items);
    let shown = { list: items.filter((x) => x.state === "active"), pool: items.filter((x) => x.state === "restock") };
    const queue = [];
    let n = 0;
    for (const tap of taps) {
      const [verb, name] = tap.split(" ");
      const find = (list) => list.find((x) => x.name.toLowerCase() === name.toLowerCase());
      const op = verb === "add" ? { id: `op${n}`, method: "shop.add", params: { names: [name], ids: [`new-${n}`] } }
        : { id: `op${n}`, method: `shop.${verb}`, params: { item: find(verb === "check" ? shown.list : shown.pool).id, once: true } };
      n += 1;
      queue.push(op);
      shown = applyQueued(shown, op);
    }
    // Each change arrives twice: its first answer lost (the agent fell silent after taking it),
    // so the phone sends it again and goes on with the second answer.
    const sent = await sendAll(queue, async (method, params) => { agent.call(method, params); return agent.call(method, params); });
    assert.deepEqual(sent.refused, [], "nothing the person did is refused");
    assert.deepEqual([agent.names("active"), agent.names("restock")], meant);
    const lower = (items) => items.map((x) => x.name.toLowerCase()).sort();
    assert.deepEqual([lower(shown.list), lower(shown.pool)], meant.map((names) => names.map((x) => x.toLowerCase())),
      "the phone showed what the agent did");
  });
}

test("an addition's answer names the pool's item: the ops after it are sent with its id", () => {
  const add = { method: "shop.add", params: { names: ["Milk", "Tea"], ids: ["x", "y"] } };
  const given = idsGiven(add, [{ id: "p", name: "Milk", state: "active" }, { id: "y", name: "Tea", state: "active" }]);
  assert.deepEqual(given, { x: "p" });
  const later = remap([{ method: "shop.check", params: { item: "x", once: true } }, { method: "shop.check", params: { item: "y" } }], given);
  assert.deepEqual(later.map((op) => op.params.item), ["p", "y"]);
  assert.deepEqual(idsGiven(add, [{ id: "x", state: "deleted" }]), {}, "a row the agent only keeps names nothing");
});

test("the Home Screen's steps are shown on an iPhone's or an iPad's browser only, and never once installed", async () => {
  const { outsideHomeScreen } = await import("../../Sources/PulseWeb/Resources/offline.js");
  const iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";
  const iPadAsMac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15";
  const chromeOnIPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1";
  const android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36";
  assert.equal(outsideHomeScreen({ userAgent: iPhone, maxTouchPoints: 5, standalone: false }), true);
  assert.equal(outsideHomeScreen({ userAgent: chromeOnIPhone, maxTouchPoints: 5, standalone: false }), true, "every iPhone browser is WebKit");
  assert.equal(outsideHomeScreen({ userAgent: iPadAsMac, maxTouchPoints: 5, standalone: false }), true, "an iPad says it is a Mac");
  assert.equal(outsideHomeScreen({ userAgent: iPadAsMac, maxTouchPoints: 0, standalone: false }), false, "a Mac");
  assert.equal(outsideHomeScreen({ userAgent: android, maxTouchPoints: 5, standalone: false }), false);
  assert.equal(outsideHomeScreen({ userAgent: iPhone, maxTouchPoints: 5, standalone: true }), false, "installed");
});

test("a phone's copy is as old as the agent's last answer, or its last ping with nothing being reloaded, and says which computer", async () => {
  const kept = new Map();
  globalThis.localStorage = { getItem: (k) => kept.get(k) ?? null, setItem: (k, v) => kept.set(k, String(v)), removeItem: (k) => kept.delete(k) };
  try {
    const offline = await import("../../Sources/PulseWeb/Resources/offline.js");
    const shopping = { list: [{ id: "a", name: "Milk", state: "active" }], pool: [] };
    const store = { agent: (part) => (part === "shopping" ? shopping : { id: "s" }) };
    assert.equal(offline.copyAge(), null, "nothing kept");
    offline.setSource("Kitchen PC");
    const before = Date.now();
    offline.keep(store, "session");
    assert.equal(offline.copyAge(), null, "the session alone is not the list");
    offline.keep(store, "shopping");
    const age = offline.copyAge();
    assert.equal(age.from, "Kitchen PC");
    assert.ok(age.at >= before && age.at <= Date.now());
    // Roaming: the copy kept from then on is the other computer's, as of its ping.
    offline.setSource("Study PC");
    offline.stillCurrent();
    assert.equal(offline.copyAge().from, "Study PC");
    // Offline (a change queued, not acknowledged): neither an answer nor a ping makes it newer.
    offline.setOffline(true);
    kept.set("house-pulse-copy-age-1", JSON.stringify({ at: 1, from: "Study PC" }));
    offline.keep(store, "shopping");
    offline.stillCurrent();
    assert.deepEqual(offline.copyAge(), { at: 1, from: "Study PC" });
    offline.setOffline(false);
    // A computer's own page keeps no copy: its pings record nothing.
    offline.setSource(null);
    offline.stillCurrent();
    assert.deepEqual(offline.copyAge(), { at: 1, from: "Study PC" });
    kept.set("house-pulse-copy-age-1", "{not json");
    assert.equal(offline.copyAge(), null, "a damaged record is no age");
    offline.forget();
    assert.equal(kept.has("house-pulse-copy-age-1"), false, "forgotten with the copy");
  } finally {
    delete globalThis.localStorage;
  }
});

test("an agent that answers 503 (phones off there, CalDAV kept) is out of reach; a 404 is a refusal", async () => {
  const { request, onConnection } = await import("../../Sources/PulseWeb/Resources/api.js");
  const seen = [];
  onConnection({ online: (now) => seen.push(now) });
  const real = globalThis.fetch;
  try {
    globalThis.fetch = async () => new Response("Phones are not turned on on this computer", { status: 503 });
    await assert.rejects(request("/api/session"), (error) => error instanceof APIError && error.code === "unreachable");
    assert.deepEqual(seen, [false], "the page is told its agent is out of reach");
    globalThis.fetch = async () => new Response(JSON.stringify({ error: { code: "unknown_method", params: {}, message: "no" } }), { status: 404 });
    await assert.rejects(request("/api/call/x"), (error) => error instanceof APIError && error.code === "unknown_method" && error.status === 404);
    assert.deepEqual(seen, [false], "a refusal is not a lost agent");
  } finally {
    globalThis.fetch = real;
  }
});
