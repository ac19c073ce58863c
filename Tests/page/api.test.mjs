// The page's calls (api.js): a method the agent's session names as only reading is asked with
// GET, its parameters in the query, with the page's token (a browser that opens a connection
// for every POST keeps one for these); every other call is a POST, and so is every call to
// another agent (a phone roaming: that agent may be of an older release). `node --test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startSession, call, useAgent } from "../../Sources/PulseWeb/Resources/api.js";

test("a call the session names as reading goes as a GET with its token; a write, a long query and a call to another agent as a POST", async () => {
  const real = globalThis.fetch;
  const asked = [];
  globalThis.fetch = async (url, options = {}) => {
    asked.push({ url: String(url), method: options.method || "GET", headers: options.headers || {}, body: options.body });
    const answer = String(url).endsWith("/api/session") ? { csrf: "token", reads: ["shop.list", "shop.lists"] } : { result: "ok" };
    return new Response(JSON.stringify(answer), { status: 200 });
  };
  try {
    await startSession();
    assert.equal(await call("shop.list", { list: "Weekend & more" }), "ok");
    assert.equal(await call("shop.lists"), "ok");
    assert.equal(await call("shop.add", { names: ["Milk"] }), "ok");
    assert.equal(await call("shop.list", { list: "x".repeat(2000) }), "ok");
    useAgent({ base: "https://kitchen.local:47655", bearer: "roaming", name: "Kitchen" });
    assert.equal(await call("shop.list", { list: "Weekend" }), "ok");
    useAgent(null);
    const [, read, plain, write, long, roaming] = asked;
    assert.equal(read.method, "GET");
    assert.equal(read.url, `/api/call/shop.list?params=${encodeURIComponent(JSON.stringify({ list: "Weekend & more" }))}`);
    assert.equal(read.headers["X-Pulse-CSRF"], "token");
    assert.equal(read.body, undefined);
    assert.deepEqual([plain.method, plain.url], ["GET", "/api/call/shop.lists"]);
    assert.deepEqual([write.method, write.url, write.body], ["POST", "/api/call/shop.add", JSON.stringify({ names: ["Milk"] })]);
    assert.deepEqual([long.method, long.url], ["POST", "/api/call/shop.list"]);
    assert.deepEqual([roaming.method, roaming.url], ["POST", "https://kitchen.local:47655/api/call/shop.list"]);
    assert.equal(roaming.headers.Authorization, "Bearer roaming");
  } finally {
    globalThis.fetch = real;
  }
});

test("an agent whose session names no reads (an older release) is asked everything with POST", async () => {
  const real = globalThis.fetch;
  const asked = [];
  globalThis.fetch = async (url, options = {}) => {
    asked.push(options.method || "GET");
    return new Response(JSON.stringify(String(url).endsWith("/api/session") ? { csrf: "token" } : { result: [] }), { status: 200 });
  };
  try {
    await startSession();
    await call("shop.list", {});
    assert.deepEqual(asked, ["GET", "POST"]);
  } finally {
    globalThis.fetch = real;
  }
});

test("an answer whose body is cut off is no answer (unreachable), never an empty result; a refusal with no JSON is said by its status", async () => {
  const real = globalThis.fetch;
  let refusal = false;
  globalThis.fetch = async (url) => {
    if (String(url).endsWith("/api/session")) return new Response(JSON.stringify({ csrf: "token", reads: ["shop.list"] }), { status: 200 });
    if (refusal) return new Response("<html>Bad gateway</html>", { status: 502 });
    // The headers came (200), then the connection was lost in the middle of the body.
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"result": [{"id": "a", "na'));
        controller.error(new TypeError("network connection was lost"));
      },
    });
    return new Response(body, { status: 200 });
  };
  try {
    await startSession();
    await assert.rejects(call("shop.list", {}), (error) => error.code === "unreachable");
    await assert.rejects(call("shop.add", { names: ["Milk"] }), (error) => error.code === "unreachable");
    refusal = true;
    await assert.rejects(call("shop.list", {}), (error) => error.code === "failed" && error.status === 502);
  } finally {
    globalThis.fetch = real;
  }
});
