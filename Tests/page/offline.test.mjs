// A phone's queue (offline.js, issue 42): what a queued change shows, the answer it stands
// for, and sending the queue in order, stopping where no agent answers and dropping what
// the household refused for good. And the service worker's list of the app's files is the
// page's modules. `node --test Tests/page`, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { applyQueued, resultOf, sendAll } from "../../Sources/PulseWeb/Resources/offline.js";
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
  const folder = new URL("../../Sources/PulseWeb/Resources/", import.meta.url);
  const modules = readdirSync(folder).filter((name) => name.endsWith(".js") && name !== "sw.js").map((name) => `/${name}`);
  assert.deepEqual(SHELL.filter((path) => path.endsWith(".js")).sort(), modules.sort());
  const router = readFileSync(new URL("../../Sources/PulseWeb/WebRouter.swift", import.meta.url), "utf8");
  for (const path of SHELL) assert.ok(path === "/" || router.includes(`"${path}"`), `${path} is served by the agent`);
  const origin = "https://house.local:47655";
  const url = (path) => new URL(path, origin);
  assert.equal(cacheable(url("/main.js"), "GET", origin), true);
  assert.equal(cacheable(url("/messages/pl.json"), "GET", origin), true);
  for (const path of ["/api/session", "/api/events", "/pair?token=x", "/ca.crt"]) assert.equal(cacheable(url(path), "GET", origin), false, path);
  assert.equal(cacheable(url("/main.js"), "POST", origin), false);
  assert.equal(cacheable(new URL("/main.js", "https://elsewhere.local"), "GET", origin), false);
});
