// A phone in the shop (issues 42, 51): the page keeps what it last saw of the household (the
// agent's answers, in this browser's storage) and opens with it when no agent answers. A
// shopping change — an addition, a check, a restock, an edit of a quantity or note (issue 57)
// — is written to the queue *before* it is sent, and leaves it only when an agent acknowledged
// it (or the household refused it for good): an agent that falls silent mid-request (its
// computer asleep, the phone out of the door) loses nothing, even if the app is closed then.
// The queue is sent in order, each change exactly once, when an agent answers (an answer is
// what "reachable" means here, not navigator.onLine). Exactly once: an addition carries the
// ids the phone chose, a check or restock says `once`, an edit what it changes from (`was`)
// (the agent's rules: Household.addShoppingItems(_:ids:), checkShoppingItem(_:once:),
// ShoppingRules.edit); sending the queue twice changes nothing more. An addition of a
// name in the restock pool brings the pool's item back under its own id: the agent answers
// with that id, and the changes queued after it that name the phone's id are sent with the
// pool's (`remap`). The pure parts are tested with `node --test`.
import { call, APIError } from "./api.js";

const SNAPSHOT = "house-pulse-snapshot-1";
const QUEUE = "house-pulse-queue-1";
/** The parts of the page kept for opening offline. */
export const KEPT = ["session", "household", "shopping", "tasks"];

/** What a queued change does to the shopping part ({list, pool}), as the agent will. */
export function applyQueued(shopping, op) {
  const s = { ...shopping, list: [...(shopping?.list || [])], pool: [...(shopping?.pool || [])] };
  const without = (items, id) => items.filter((x) => x.id !== id);
  // An addition to another list than the one shown shows nowhere here (issue 57).
  if (op.method === "shop.add" && (op.params.list ?? null) !== (s.on ?? null)) return s;
  if (op.method === "shop.add") {
    op.params.names.forEach((name, i) => {
      const id = op.params.ids[i];
      if (s.list.some((x) => x.id === id)) return;
      s.list.push({ id, name, state: "active", queued: true });
      // The agent brings a pool item of that name back (any case): it leaves the pool shown.
      const back = s.pool.find((x) => x.name.toLowerCase() === name.toLowerCase());
      if (back) s.pool = without(s.pool, back.id);
    });
  } else if (op.method === "shop.check") {
    const item = s.list.find((x) => x.id === op.params.item) || s.pool.find((x) => x.id === op.params.item);
    if (item) { s.list = without(s.list, item.id); s.pool = [{ ...item, state: "restock" }, ...without(s.pool, item.id)]; }
  } else if (op.method === "shop.restock") {
    const item = s.pool.find((x) => x.id === op.params.item) || s.list.find((x) => x.id === op.params.item);
    if (item) { s.pool = without(s.pool, item.id); s.list = [...without(s.list, item.id), { ...item, state: "active" }]; }
  } else if (op.method === "shop.edit") {
    const edited = (x) => (x.id === op.params.item ? edit(x, op.params) : x);
    s.list = s.list.map(edited);
    s.pool = s.pool.map(edited);
  }
  return s;
}

/** An item with a `shop.edit`'s quantity and note (a key absent leaves it; "" or null clears it). */
function edit(item, params) {
  const out = { ...item };
  for (const key of ["quantity", "note"]) {
    if (!(key in params)) continue;
    const value = typeof params[key] === "string" ? params[key].trim() : "";
    if (value) out[key] = value; else delete out[key];
  }
  return out;
}

/** The answer a queued change stands for until the agent gives the real one. */
export function resultOf(op, shopping) {
  if (op.method === "shop.add") return op.params.names.map((name, i) => ({ id: op.params.ids[i], name, state: "active", restocked: false }));
  const item = [...(shopping?.list || []), ...(shopping?.pool || [])].find((x) => x.id === op.params.item);
  if (op.method === "shop.edit") return edit(item || { id: op.params.item }, op.params);
  return { ...(item || { id: op.params.item }), state: op.method === "shop.check" ? "restock" : "active" };
}

/** The ids an addition's answer gives where the phone chose others (a name brought back
 * from the restock pool keeps the pool item's id): {chosen id: the agent's id}. */
export function idsGiven(op, result) {
  const given = {};
  if (op.method !== "shop.add" || !Array.isArray(result)) return given;
  op.params.ids.forEach((id, i) => {
    const item = result[i];
    if (item && typeof item.id === "string" && item.id !== id && item.state !== "deleted") given[id] = item.id;
  });
  return given;
}

/** `ops` with the items named by `given`'s keys named by its values instead. */
export function remap(ops, given) {
  return ops.map((op) => (op.params && typeof op.params.item === "string" && given[op.params.item]
    ? { ...op, params: { ...op.params, item: given[op.params.item] } } : op));
}

/**
 * Sends `queue` in order through `send(method, params)`: an op the agent took, or the
 * household refused (422: the item was deleted meanwhile), leaves the queue; anything else
 * (no agent, not signed in, a missing token) stops it, keeping that op and the rest. After
 * each op, `settled(op, outcome, left)` (outcome `{result}` or `{error}`), where `left` is
 * what is left to send (already remapped). Returns {left, refused}.
 */
export async function sendAll(queue, send, settled = (_op, _outcome, _left) => {}) {
  let left = [...queue];
  const refused = [];
  while (left.length) {
    const op = left[0];
    let outcome;
    try {
      outcome = { result: await send(op.method, op.params) };
    } catch (error) {
      if (!(error instanceof APIError) || error.status !== 422) break;
      refused.push({ op, code: error.code, error });
      outcome = { error };
    }
    left = remap(left.slice(1), outcome.result === undefined ? {} : idsGiven(op, outcome.result));
    settled(op, outcome, left);
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
  if (part === "shopping") current();
}

// How old the copy is (issue 57: "List as of 17:02, from Kitchen PC"): when the list kept was
// last known to be the household's as the computer in use held it, and that computer's name.
// Known by the agent's answer, or, while nothing is being reloaded, by its feed's ping (every
// 2 s: nothing changed meanwhile, or the page would be reloading it).
const AGE = "house-pulse-copy-age-1";
let source = null;
/** The computer the copy is kept from now (its name, for the banner), or none (a computer's
 * own page, which keeps no copy). */
export function setSource(/** @type {string | null | undefined} */ name) { source = typeof name === "string" && name ? name : null; }
function current() {
  try { storage()?.setItem(AGE, JSON.stringify({ at: Date.now(), from: source })); } catch { /* full: the age is not said */ }
}
/** The agent in use was heard with nothing of the page being reloaded: the copy is current. */
export function stillCurrent() {
  if (source !== null && !offline && storage()?.getItem(SNAPSHOT)) current();
}
/** `{at, from}` (Unix ms, the computer's name or null) of the copy kept, or null. */
export function copyAge() {
  try {
    const age = JSON.parse(storage()?.getItem(AGE) || "null");
    return age && Number.isFinite(age.at) ? { at: age.at, from: typeof age.from === "string" && age.from ? age.from : null } : null;
  } catch { return null; }
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

/** A shopping change, queued first (kept in this browser's storage) and then sent: its
 * answer once an agent acknowledged it, or what it stands for while no agent answers (it
 * stays queued and shown, and goes when one answers: `drain`). A refusal is thrown. */
export async function send(store, method, params) {
  const op = { id: crypto.randomUUID(), method, params };
  saveQueue([...queue(), op]);
  const shown = store.view("shopping");
  if (!offline) {
    waiting.add(op.id);
    try {
      await drain();
    } finally {
      waiting.delete(op.id);
    }
    const outcome = outcomes.get(op.id);
    outcomes.delete(op.id);
    if (outcome?.error) throw outcome.error;
    if (outcome) return outcome.result;
  }
  // Not acknowledged (no agent answered in time): it waits in the queue, shown.
  offline = true;
  store.set("shopping", queue().reduce(applyQueued, store.agent("shopping")));
  return resultOf(op, shown);
}

/** The ops a `send` waits for, and their outcomes (the others' refusals are said by flush). */
const waiting = new Set();
const outcomes = new Map();
let draining = null;
let refusedMeanwhile = [];

/** Sends the queue, in order, once at a time (one drain for every caller), until it is
 * empty or no agent answers. Each op leaves the storage only as its answer comes (and the
 * ops after an addition are remapped in the same write). */
export function drain() {
  draining ??= (async () => {
    try {
      for (;;) {
        const sending = queue();
        if (!sending.length) { offline = false; return; }
        const sent = new Set(sending.map((op) => op.id));
        const { left } = await sendAll(sending, call, (op, outcome, rest) => {
          // This op done; the rest of this batch as remapped, then what was queued meanwhile.
          const restIds = new Set(rest.map((x) => x.id));
          const later = queue().filter((x) => !sent.has(x.id) && !restIds.has(x.id));
          saveQueue([...rest, ...remap(later, outcome.result === undefined ? {} : idsGiven(op, outcome.result))]);
          sent.delete(op.id);
          if (waiting.has(op.id)) outcomes.set(op.id, outcome);
          else if (outcome.error) refusedMeanwhile.push({ op, code: outcome.error.code, error: outcome.error });
        });
        if (left.length) { offline = true; return; }
      }
    } finally {
      draining = null;
    }
  })();
  return draining;
}

/** An agent answers again: the queue, in order, once. Returns the refused ({op, code}). */
export async function flush() {
  await drain();
  const refused = refusedMeanwhile;
  refusedMeanwhile = [];
  return refused;
}

/** Forgets everything this browser kept of the household: the copy, the words and the queue
 * (a phone signed out or removed). */
// A phone signed out by its agent (its cookie expired unused) keeps its roaming credential,
// and nothing else of the household's, for one tap's way back (main.js): gone once used, or
// when the household says the phone was removed.
const WAY_BACK = "house-pulse-way-back";
export const wayBack = () => storage()?.getItem(WAY_BACK) || null;
export function keepWayBack(credential) {
  if (typeof credential === "string" && credential) storage()?.setItem(WAY_BACK, credential);
  else storage()?.removeItem(WAY_BACK);
}

export function forget({ keepQueue = false } = {}) {
  for (const key of [SNAPSHOT, WORDS, AGE, ...(keepQueue ? [] : [QUEUE])]) storage()?.removeItem(key);
  offline = false;
}

/**
 * Whether this is an iPhone's or an iPad's browser (all of them WebKit) with the app opened in
 * the browser, not from the Home Screen: there Safari deletes what the app keeps (its copy, the
 * changes not sent yet) after 7 days without a visit (docs/ENGINES.md, "The iPhone's rules").
 * An iPad says it is a Mac: it is told by its touch screen.
 * @param {{userAgent: string, maxTouchPoints: number, standalone: boolean}} device
 */
export function outsideHomeScreen({ userAgent, maxTouchPoints, standalone }) {
  const ios = /\b(iPhone|iPad|iPod)\b/.test(userAgent) || (/\bMacintosh\b/.test(userAgent) && maxTouchPoints > 1);
  return ios && !standalone;
}
