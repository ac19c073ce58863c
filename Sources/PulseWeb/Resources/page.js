// The page's parts and tabs. Each part (one module: shopping.js, tasks.js, …) registers
// itself with `register({ id, tab?, topics, reads?, load, render, wire?, after?, exact?, onEvent? })`:
// `load` asks the agent and puts the answer in the store, `render` draws from the store,
// `topics` say which live-feed events make it load again (store.js, `concerns`), `after`
// what such an event changes in its part before that (live.js), `exact(event)` whether that
// is what the agent's answer will show (true if absent), `reads` which parts of the store it
// draws from (its own by default).
import { Store, concerns } from "./store.js";
import { APIError } from "./api.js";
import { $ } from "./ui.js";

export const store = new Store();
/** What this page alone knows: the tab shown, the kid chosen, … */
export const local = { tab: "shopping" };

const parts = new Map();
export const tabs = [];

export function register(part) {
  parts.set(part.id, part);
  if (part.tab) tabs.push(part.id);
}

/** Whether this is the phone app: the agent says `phone` in the session, and serves phones a
 * document marked so, without the computer's own sections (WebAssets.phoneIndexHTML). */
const phone = () => local.phone || globalThis.document?.body?.classList.contains("phone") === true;
/** The parts this page uses: on a phone, not the computer's own administration (`computerOnly`:
 * machines, phones, this computer, the household's profile and settings, …), whose sections
 * its document does not hold. */
function used() { return [...parts.values()].filter((part) => !(phone() && part.computerOnly)); }

/** A name being edited in place (ui.editInPlace's field, focused and not yet ended): the redraws
 * wait until the edit ends — a live update took the field away mid-word, saved what was typed so
 * far, and gave the keys that followed to the row's check button (a space checked the item off). */
const inPlace = () => document.activeElement instanceof HTMLInputElement && document.activeElement.dataset.editing === "true";
/** What changed while a name was being edited in place. */
const waiting = new Set();

function redraw() {
  const changed = [...waiting];
  waiting.clear();
  const place = focusPlace();
  for (const part of used()) if ((part.reads || [part.id]).some((read) => changed.includes(read))) part.render();
  restoreFocus(place);
}

store.subscribe((changed) => {
  waiting.add(changed);
  if (!inPlace()) redraw();
});
// The edit ended (saved or not; its part drew itself again): what changed meanwhile is drawn.
// (`globalThis.document`: node loads this module for the page's words, with no document.)
globalThis.document?.addEventListener("edit-ended", () => { if (waiting.size && !inPlace()) redraw(); });

/**
 * Where the keyboard's focus is, as a redraw can find it again: its row (`[data-id]`) in its
 * list (the nearest element with an id) and its kind (its first class, or its tag). A part draws
 * its lists anew, and the focused control goes with the old row: without this, a change from
 * anywhere (a live update from another computer) sent a keyboard's focus back to the page's top.
 * @returns {{list: string, row: string, index: number, kind: string | null, tag: string} | null}
 */
function focusPlace() {
  const focused = document.activeElement;
  const row = focused instanceof HTMLElement ? focused.closest("[data-id]") : null;
  const list = row?.parentElement?.closest("[id]");
  if (!(focused instanceof HTMLElement) || !(row instanceof HTMLElement) || !list) return null;
  const rows = [...list.querySelectorAll("[data-id]")];
  return { list: list.id, row: row.dataset.id || "", index: rows.indexOf(row), kind: focused.classList[0] || null, tag: focused.tagName.toLowerCase() };
}

/** Gives the focus back to the same control of the same row, or of the row now in its place (the
 * row went: checked off, removed), when a redraw dropped it (it is on the page itself). */
function restoreFocus(/** @type {ReturnType<typeof focusPlace>} */ place) {
  if (!place || (document.activeElement && document.activeElement !== document.body)) return;
  const list = document.getElementById(place.list);
  const rows = list ? /** @type {HTMLElement[]} */ ([...list.querySelectorAll("[data-id]")]) : [];
  const row = rows.find((r) => r.dataset.id === place.row) || rows[Math.min(place.index, rows.length - 1)];
  if (!row) return;
  const same = row.matches(place.tag) && (!place.kind || row.classList.contains(place.kind)) ? row
    : row.querySelector(place.kind ? `${place.tag}.${CSS.escape(place.kind)}` : place.tag);
  const target = same || row.querySelector("button, input, select, [tabindex]");
  // Where the focus was, on the screen already: a redraw never scrolls the page.
  if (target instanceof HTMLElement) target.focus({ preventScroll: true });
}

function partsConcerned(event) {
  return used().filter((part) => concerns(part.topics || [], event));
}

/** Loads every part once: all asked at once, the household's answer kept first (the others
 * show its members and follow its settings). Rejects with the first load's failure, once every
 * load has settled. */
export async function loadAll() {
  loading += 1;
  try {
    const first = parts.get("household");
    const household = first ? first.load() : Promise.resolve();
    const others = store.after(household, () => used().filter((p) => p !== first).map((p) => p.load()));
    for (const result of await Promise.allSettled([household, ...others])) if (result.status === "rejected") throw result.reason;
  } finally {
    loading -= 1;
  }
}

/** Loads under way (loadAll's, and the gathered refreshes'). */
let loading = 0;
/** Whether the page holds what the agent last said: no event's reload is waiting or under way. */
export const settled = () => loading === 0 && dirty.size === 0 && refreshTimer === null;

/**
 * A household event of the live feed: each part it concerns takes the change at once when the
 * event alone says it (`after`: live.js), in the frame the event arrived in, and is reloaded
 * behind it (`refresh`), so the agent's answer is what stays shown.
 */
export function received(event) {
  const concerned = partsConcerned(event);
  // Whether the event alone said what changed in every part it concerns (shown already).
  let shown = concerned.length > 0;
  for (const part of concerned) {
    const after = part.after;
    if (!after) { shown = false; continue; }
    if (part.exact && !part.exact(event)) shown = false; // shown, but not as the agent's answer will
    store.patch(part.id, (value) => {
      const changed = after(value, event);
      if (changed === undefined) shown = false;
      return changed;
    });
  }
  const ids = concerned.length ? concerned.map((p) => p.id) : ["household", "status"];
  if (shown) confirmLater(ids); else refresh(...ids);
  notify(event);
}

// Refreshes gathered over a moment: a burst of events reloads each part once.
const dirty = new Set();
let refreshTimer = null;
/** When the gathered reload runs (Date.now()), since when it gathers, and whether a part needs
 * it (an event the page could not show, a change of its own): not a confirmation only. */
let refreshAt = 0, gatheringSince = 0, needed = false;
/** A reload a part needs runs once the events pause this long. */
export const SOON = 30;
/** A reload that only confirms what events showed waits for the feed to be quiet this long. */
export const QUIET = 500;
/** No reload waits longer than this after the first change it gathers. */
export const GATHER_AT_MOST = 2000;
/**
 * When a gathered reload runs (ms, on the clock of `now`): SOON after `now` for a part that
 * needs it; for a confirmation QUIET after `now`, or when a reload a part needs is due already
 * (`pending`, `needed`), then; and never later than GATHER_AT_MOST after the first change it
 * gathers (`since`), however busy the feed. Pure.
 * @param {{now: number, wait: number, pending?: number | null, needed?: boolean, since?: number}} when
 */
export function reloadAt({ now, wait, pending = null, needed = false, since = now }) {
  const at = wait > SOON && pending !== null && needed ? pending : now + wait;
  return Math.min(at, since + GATHER_AT_MOST);
}
export function refresh(...ids) { gather(ids, SOON); }
/** Reloads `ids` once the feed is quiet: what they show is what an event said already, and a
 * burst of changes (another person checking items off, one after another) shows each at once
 * and reloads the lists once at its end, not after every change (a phone's list of hundreds of
 * items read again for each). A reload another change needs sooner is not delayed. */
function confirmLater(/** @type {string[]} */ ids) { gather(ids, QUIET); }
function gather(/** @type {string[]} */ ids, /** @type {number} */ wait) {
  ids.forEach((id) => dirty.add(id));
  const now = Date.now();
  if (refreshTimer === null) { gatheringSince = now; needed = false; }
  const at = reloadAt({ now, wait, pending: refreshTimer === null ? null : refreshAt, needed, since: gatheringSince });
  needed ||= wait <= SOON;
  refreshAt = at;
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(async () => {
    refreshTimer = null;
    const due = [...dirty];
    dirty.clear();
    loading += 1;
    try {
      for (const id of due) {
        const part = parts.get(id);
        if (phone() && part?.computerOnly) continue;
        try { await part?.load(); } catch (error) { if (!(error instanceof APIError)) console.error(error); }
      }
    } finally {
      loading -= 1;
    }
  }, Math.max(0, at - now));
}

const wired = new Set();
/** Wires each part used, once (parts loaded later are wired when this runs again). */
export function wireAll() {
  for (const part of used()) {
    if (wired.has(part)) continue;
    wired.add(part);
    part.wire?.();
  }
}
function notify(event) { for (const part of used()) part.onEvent?.(event); }

export function switchTab(tab, focus = false) {
  if (!tabs.includes(tab)) tab = tabs[0];
  local.tab = tab;
  for (const name of tabs) {
    const button = $(`t-${name}`);
    const selected = name === tab;
    button.setAttribute("aria-selected", String(selected));
    button.tabIndex = selected ? 0 : -1;
    $(`tab-${name}`).hidden = !selected;
  }
  if (focus) $(`t-${tab}`).focus();
  if (location.hash !== `#${tab}`) history.replaceState(null, "", `#${tab}`);
  for (const part of used()) part.tabShown?.(tab);
}
