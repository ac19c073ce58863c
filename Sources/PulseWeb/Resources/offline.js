// A phone in the shop (issue 42): the page keeps what it last saw of the household (the
// agent's answers, in this browser's storage) and opens with it when no agent answers; the
// shopping changes made then — additions, checks, restocks — wait in a queue, applied to
// what is shown at once, and are sent in order, each exactly once, when an agent answers
// again (an answer is what "reachable" means here, not navigator.onLine). Exactly once: an
// addition carries the ids the phone chose, a check or restock says `once` (the agent's
// rules: Household.addShoppingItems(_:ids:), checkShoppingItem(_:once:)); sending the
// queue twice changes nothing more. The pure parts are tested with `node --test`.
import { call, APIError } from "./api.js";

const SNAPSHOT = "house-pulse-snapshot-1";
const QUEUE = "house-pulse-queue-1";
/** The parts of the page kept for opening offline. */
export const KEPT = ["session", "household", "shopping", "tasks"];

/** What a queued change does to the shopping part ({list, pool}), as the agent will. */
export function applyQueued(shopping, op) {
  const s = { list: [...(shopping?.list || [])], pool: [...(shopping?.pool || [])] };
  const without = (items, id) => items.filter((x) => x.id !== id);
  if (op.method === "shop.add") {
    op.params.names.forEach((name, i) => {
      const id = op.params.ids[i];
      if (!s.list.some((x) => x.id === id)) s.list.push({ id, name, state: "active", queued: true });
    });
  } else if (op.method === "shop.check") {
    const item = s.list.find((x) => x.id === op.params.item) || s.pool.find((x) => x.id === op.params.item);
    if (item) { s.list = without(s.list, item.id); s.pool = [{ ...item, state: "restock" }, ...without(s.pool, item.id)]; }
  } else if (op.method === "shop.restock") {
    const item = s.pool.find((x) => x.id === op.params.item) || s.list.find((x) => x.id === op.params.item);
    if (item) { s.pool = without(s.pool, item.id); s.list = [...without(s.list, item.id), { ...item, state: "active" }]; }
  }
  return s;
}

/** The answer a queued change stands for until the agent gives the real one. */
export function resultOf(op, shopping) {
  if (op.method === "shop.add") return op.params.names.map((name, i) => ({ id: op.params.ids[i], name, state: "active", restocked: false }));
  const item = [...(shopping?.list || []), ...(shopping?.pool || [])].find((x) => x.id === op.params.item);
  return { ...(item || { id: op.params.item }), state: op.method === "shop.check" ? "restock" : "active" };
}

/**
 * Sends `queue` in order through `send(method, params)`: an op the agent took, or the
 * household refused (422: the item was deleted meanwhile), leaves the queue; anything else
 * (no agent, not signed in, a missing token) stops it, keeping that op and the rest.
 * Returns {left, refused}.
 */
export async function sendAll(queue, send) {
  const left = [...queue];
  const refused = [];
  while (left.length) {
    try {
      await send(left[0].method, left[0].params);
    } catch (error) {
      if (!(error instanceof APIError) || error.status !== 422) break;
      refused.push({ op: left[0], code: error.code });
    }
    left.shift();
  }
  return { left, refused };
}

// ---- The browser's side (storage, the store) ----

const storage = () => (typeof localStorage === "undefined" ? null : localStorage);
let offline = false;

export function queue() {
  try { return JSON.parse(storage()?.getItem(QUEUE) || "[]"); } catch { return []; }
}
function saveQueue(ops) { storage()?.setItem(QUEUE, JSON.stringify(ops)); }

/** Keeps the agent's answers of the kept parts (called as they arrive). */
export function keep(store, part) {
  if (!KEPT.includes(part) || offline) return;
  const snapshot = readSnapshot();
  snapshot[part] = store.agent(part);
  storage()?.setItem(SNAPSHOT, JSON.stringify(snapshot));
}
function readSnapshot() {
  try { return JSON.parse(storage()?.getItem(SNAPSHOT) || "{}"); } catch { return {}; }
}

/** Opens with what was last seen (false: nothing kept, as on a phone just added). */
export function restore(store) {
  const snapshot = readSnapshot();
  if (!snapshot.session || !snapshot.shopping) return false;
  offline = true;
  for (const part of KEPT) if (snapshot[part] !== undefined) store.set(part, snapshot[part]);
  store.set("shopping", queue().reduce(applyQueued, snapshot.shopping));
  return true;
}

const WORDS = "pulse-phone-words";
/** Keeps the page's words with the copy (one language: the page's), so that a warm start
 * shows the copy in them at once, without fetching them first. */
export function keepWords(catalogue) {
  try { storage()?.setItem(WORDS, JSON.stringify({ language: catalogue.language, messages: catalogue.messages })); } catch { /* full: fetched next time */ }
}
/** The words kept in `language` (null: none kept, or in another language). */
export function keptWords(language) {
  try {
    const kept = JSON.parse(storage()?.getItem(WORDS) || "null");
    return kept && kept.language === language && kept.messages && typeof kept.messages === "object" ? kept : null;
  } catch { return null; }
}

export const isOffline = () => offline;
export function setOffline(value) { offline = value; }

/** A shopping change: sent now, or queued (and shown) when no agent answers. */
export async function send(store, method, params) {
  const op = { id: crypto.randomUUID(), method, params };
  if (!offline && queue().length === 0) {
    try { return await call(method, params); } catch (error) {
      if (!(error instanceof APIError) || error.code !== "unreachable") throw error;
      offline = true;
    }
  }
  saveQueue([...queue(), op]);
  const shown = store.view("shopping");
  store.set("shopping", applyQueued(store.agent("shopping"), op));
  return resultOf(op, shown);
}

/** An agent answers again: the queue, in order, once. Returns the refused ({op, code}). */
export async function flush() {
  const sending = queue();
  const { left, refused } = await sendAll(sending, call);
  // What was queued meanwhile stays, after what is left of this batch.
  const sent = new Set(sending.map((op) => op.id));
  saveQueue([...left, ...queue().filter((op) => !sent.has(op.id))]);
  if (queue().length === 0) offline = false;
  return refused;
}
