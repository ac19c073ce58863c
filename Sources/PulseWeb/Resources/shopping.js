// The Shopping tab: the list, rapid entry (with suggestions from the restock pool), the
// restock pool, deleting one item, clear — each with undo.
import { call } from "./api.js";
import { $, el, toast, fail, pulse, t, editInPlace, drawRows, language } from "./ui.js";
import { register, store, refresh, local } from "./page.js";
import { send as sendOrQueue, isOffline } from "./offline.js";
import { shoppingAfter } from "./live.js";
import { currentList, onList, forList, renderLists, listSelect, useLoad } from "./shoplists.js";
import { renderTrip, outSince, listedSince } from "./trip.js";

// On a phone, additions, checks, restocks and edits of a quantity or note may be made with no
// agent answering: they are queued and sent once, later (offline.js); an addition carries the
// ids it will have, a check or restock says `once`, an edit what it changes from (`was`: sent
// twice, it changes nothing more; someone else's change meanwhile is kept and said). The
// computer's page sends them as always.
function change(method, params) {
  if (!local.phone) return call(method, params);
  const once = method === "shop.add" ? { ids: params.names.map(() => crypto.randomUUID()) } : method === "shop.edit" ? {} : { once: true };
  return sendOrQueue(store, method, { ...params, ...once });
}
// A queued change is already in what is shown: the guess made for it goes.
function settled() { if (isOffline()) store.set("shopping", store.agent("shopping")); }

const newItems = { ids: [], count: 0 };

// The list's order, this reader's choice, kept in this browser: as added, or in the shop's
// walking order the agent learns from the family's check-offs (`shop.list`'s `order`).
const ORDER = "pulse.shopping.order";
function shopOrder() {
  try { return localStorage.getItem(ORDER) === "shop" ? "shop" : "added"; } catch { return "added"; }
}
function chooseOrder(order) {
  try { localStorage.setItem(ORDER, order); } catch { /* not kept: this page only */ }
  renderOrder();
  refresh("shopping");
}
function renderOrder() {
  const order = shopOrder();
  $("order-added").setAttribute("aria-pressed", String(order === "added"));
  $("order-shop").setAttribute("aria-pressed", String(order === "shop"));
}
let rapidActive = false;

async function load() {
  await store.load("shopping", async () => {
    const order = shopOrder();
    // The household's lists, and the one this reader shows (`on`: its id; null, the first).
    // An agent of an earlier release (a phone roaming to it) knows neither: one list, no trips.
    const older = (fallback) => (error) => { if (error?.code === "unknown_method") return fallback; throw error; };
    const [lists, trips, [list, pool]] = await Promise.all([call("shop.lists").catch(older([])), call("shop.trips").catch(older([])),
      forList((on) => Promise.all([call("shop.list", { ...on, ...(order === "shop" ? { order } : {}) }), call("shop.list", { ...on, pool: "restock" })]))]);
    return { lists, trips, list, pool, on: currentList() };
  });
}
useLoad(load);

register({
  id: "shopping",
  tab: true,
  topics: ["shopping.", "shopping_item", "shopping_checkoff", "shopping_list", "shopping_trip"],
  after: shoppingAfter,
  // In the shop's order an item added or back from the pool goes where the agent places it, not
  // at the end where the event shows it: its reload is not only a confirmation (page.js).
  exact: (event) => shopOrder() !== "shop" || !["shopping.added", "shopping.restocked"].includes(event.type),
  load,
  render,
  wire,
  onEvent(event) {
    // Only what reaches the list shown is new here.
    if (event.type === "shopping.added" && !event.local && !event.severalLists && (event.list ?? null) === currentList()) {
      if (event.row) newItems.ids.push(event.row);
      newItems.count += event.count || 1;
      renderNewItems();
    }
  },
  tabShown: renderNewItems,
});

function render() {
  const { list = [], pool = [], lists = [], trips = [] } = store.view("shopping") || {};
  if (editing && $("shop-list").querySelector("form.item-edit")) return; // a live update waits for the edit
  renderLists(lists, list.length);
  renderTrip(trips);
  since = outSince(trips);
  // Places among the items the agent holds (a row still being sent has none: the agent's
  // `position` counts only its own items).
  const placed = list.filter((item) => !item.pending);
  // A row shows its item, the words' language, the order (the ⠿ handle and its place among the
  // items in the shop's order) and whether it came after this reader's trip began.
  const order = shopOrder(), words = language();
  drawRows($("shop-list"), listRows, list, (item) => {
    const place = order === "shop" ? `${placed.indexOf(item)}/${placed.length}` : "";
    return `${JSON.stringify(item)}|${order}|${place}|${listedSince(item.listed, since)}|${words}`;
  }, (item) => shopRow(item, placed.indexOf(item), placed.length), (row) => !changedInPlace.has(row));
  if (focusAfter) {
    $("shop-list").querySelector(`li[data-id="${CSS.escape(focusAfter)}"] .handle`)?.focus();
    focusAfter = null;
  }
  $("shop-count").textContent = list.length;
  $("shop-empty").hidden = list.length > 0 || rapidActive;
  $("shop-list").hidden = list.length === 0;
  $("restock-count").textContent = pool.length;
  drawRows($("restock-list"), poolRows, pool, (item) => `${JSON.stringify(item)}|${words}`, poolRow);
  $("restock-empty").hidden = pool.length > 0;
  // The row being typed in stays in view as the list grows above it (seed 003).
  if (rapidActive) $("shop-rapid").querySelector("input.rapid")?.scrollIntoView({ block: "nearest" });
  // Suggestions (a household setting): the restock pool's names, most recently bought first;
  // choosing one adds it, and the agent brings that same item back.
  const suggest = store.view("household")?.settings?.suggestions !== false;
  $("shop-suggestions").replaceChildren(...(suggest ? pool : []).map((item) => el("option", { value: item.name })));
}

function renderNewItems() {
  const banner = $("new-items");
  const show = newItems.count > 0 && local.tab === "shopping";
  banner.hidden = !show;
  if (show) banner.textContent = t("page.shopping.new_items", { count: newItems.count });
}

/** An item's quantity ("2", "1 kg") before its name, and its note under it, when it has them. */
function details(item) {
  return {
    quantity: item.quantity ? el("span", { class: "qty", text: item.quantity }) : null,
    note: item.note ? el("span", { class: "item-note", text: item.note }) : null,
  };
}

/** The rows drawn last (ui.drawRows): the list's and the restock pool's. */
const listRows = new Map(), poolRows = new Map();
/** The list's rows changed in place since drawn (an edit in them, a check-off leaving): never reused. */
const changedInPlace = new WeakSet();
let focusAfter = null; // the item whose handle keeps the focus after a keyboard move
let since = null; // this reader's trip's start on the list shown: what was added after it is marked
let dragged = null;

function shopRow(item, index, count) {
  const name = el("span", { class: "name", text: item.name, title: t("page.shopping.rename.title"), role: "button", tabindex: "0",
    "aria-label": t("page.shopping.item.label", { name: item.name }) });
  const { quantity, note } = details(item);
  // In the shop's order, a person corrects it: the ⠿ handle with ↑ / ↓, or drag and drop.
  const movable = shopOrder() === "shop" && !item.pending && count > 1;
  const handle = movable ? el("button", { type: "button", class: "handle", text: "⠿",
    "aria-label": t("page.shopping.move.label", { name: item.name, position: index + 1, count }) }) : null;
  const li = el("li", { "data-id": item.id, class: item.pending ? "pending" : "", ...(movable ? { draggable: "true" } : {}) },
    handle,
    el("button", { type: "button", class: "check", "aria-pressed": "false", "aria-label": t("page.shopping.check", { name: item.name }),
      onclick: () => checkItem(item, li) }),
    el("span", { class: "grow" }, el("span", { class: "item-line" }, quantity, name), note,
      listedSince(item.listed, since) ? el("span", { class: "while-out", text: t("page.shopping.trip.added") }) : null),
    item.pending ? null : el("button", { type: "button", class: "row-button details", text: "✎",
      "aria-label": t("page.shopping.details", { name: item.name }), onclick: () => editDetails(item, li) }),
    el("button", { type: "button", class: "row-button remove", text: "✕", "aria-label": t("page.shopping.delete", { name: item.name }),
      onclick: () => deleteItem(item) }));
  if (handle) {
    handle.addEventListener("keydown", (e) => {
      const step = e.key === "ArrowUp" ? -1 : e.key === "ArrowDown" ? 1 : 0;
      if (!step) return;
      e.preventDefault();
      const position = index + 1 + step;
      if (position < 1 || position > count) return;
      focusAfter = item.id;
      moveItem(item, position);
    });
    li.addEventListener("dragstart", (e) => { dragged = item; li.classList.add("dragging"); e.dataTransfer.effectAllowed = "move"; e.dataTransfer.setData("text/plain", item.id); });
    li.addEventListener("dragend", () => { dragged = null; li.classList.remove("dragging"); });
    li.addEventListener("dragover", (e) => { if (dragged && dragged.id !== item.id) { e.preventDefault(); li.classList.add("drop-target"); } });
    li.addEventListener("dragleave", () => li.classList.remove("drop-target"));
    li.addEventListener("drop", (e) => {
      e.preventDefault();
      li.classList.remove("drop-target");
      if (dragged && dragged.id !== item.id) moveItem(dragged, index + 1);
    });
  }
  const rename = () => startRename(item, name);
  name.addEventListener("click", rename);
  name.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); rename(); } });
  return li;
}

/** The walking order corrected: `item` at `position` (1 = first) of the list in the shop's order. */
async function moveItem(item, position) {
  try {
    await store.guess("shopping", (s) => {
      const rest = without(s.list, item.id);
      return { ...s, list: [...rest.slice(0, position - 1), item, ...rest.slice(position - 1)] };
    }, () => call("shop.move", { item: item.id, position, ...onList() }));
  } catch (error) { focusAfter = null; fail(error); }
  refresh("shopping");
}

// One wrong item: gone at once on every computer, and Undo brings the same item back.
async function deleteItem(item) {
  try {
    await store.guess("shopping", (s) => ({ ...s, list: without(s.list, item.id) }), () => call("shop.delete", { item: item.id, ...onList() }));
    toast(t("page.shopping.deleted", { name: item.name }), { action: t("page.shopping.undo"), onAction: () => undelete(item) });
  } catch (error) { fail(error); }
  refresh("shopping");
}

async function undelete(item) {
  try { await call("shop.undelete", { item: item.id, pool: "active" }); } catch (error) { fail(error); }
  refresh("shopping");
}

function poolRow(item) {
  const { quantity, note } = details(item);
  return el("li", { "data-id": item.id },
    el("span", { class: "grow" }, el("span", { class: "item-line" }, quantity, el("span", { class: "name", text: item.name })), note),
    el("button", { type: "button", class: "row-button restock", "aria-label": t("page.shopping.restock_item", { name: item.name }), text: "+",
      onclick: () => restockItem(item) }));
}

// Guesses (store.js): shown at once, undone if the agent refuses.
const without = (items, id) => items.filter((x) => x.id !== id);

async function checkItem(item, li) {
  changedInPlace.add(li);
  li.classList.add("leaving");
  const sent = change("shop.check", { item: item.id, ...onList() });
  sent.catch(() => {}); // awaited below, after the row's leaving animation
  await new Promise((resolve) => setTimeout(resolve, 250));
  pulse($("restock-toggle"));
  try {
    await store.guess("shopping", (s) => ({ ...s, list: without(s.list, item.id), pool: [{ ...item, state: "restock" }, ...without(s.pool, item.id)] }),
      () => sent);
    settled();
  } catch (error) { fail(error); }
  refresh("shopping");
}

async function restockItem(item) {
  try {
    await store.guess("shopping", (s) => ({ ...s, list: [...without(s.list, item.id), { ...item, state: "active" }], pool: without(s.pool, item.id) }),
      () => change("shop.restock", { item: item.id, ...onList() }));
    settled();
  } catch (error) { fail(error); }
  refresh("shopping");
}

function startRename(item, name) {
  const row = name.closest("li");
  if (row) changedInPlace.add(row);
  editInPlace(name, {
    value: item.name, maxlength: 200, label: t("page.shopping.rename.label", { name: item.name }),
    save: (text) => store.guess("shopping", (s) => ({ ...s, list: s.list.map((x) => (x.id === item.id ? { ...x, name: text } : x)) }),
      () => call("shop.rename", { item: item.id, name: text, ...onList() })),
    done: () => { render(); refresh("shopping"); },
  });
}

// An item's quantity and note, edited in place: Enter or Save keeps (an emptied field clears it),
// Escape or Cancel leaves; the focus goes back to the item's ✎.
let editing = null;
function editDetails(item, li) {
  editing = item.id;
  const leave = () => {
    editing = null;
    render();
    const again = $("shop-list").querySelector(`li[data-id="${CSS.escape(item.id)}"] .details`);
    if (again instanceof HTMLElement) again.focus();
  };
  const quantity = el("input", { name: "quantity", value: item.quantity || "", maxlength: "40", class: "quantity",
    placeholder: t("page.shopping.quantity.placeholder"), "aria-label": t("page.shopping.quantity", { name: item.name }) });
  const note = el("input", { name: "note", value: item.note || "", maxlength: "200",
    placeholder: t("page.shopping.note.placeholder"), "aria-label": t("page.shopping.note", { name: item.name }) });
  // With several lists, the item can go to another one (the agent refuses a name there already);
  // not on a phone with no computer in reach (a move is not queued).
  const where = isOffline() ? null : listSelect(store.view("shopping")?.lists, item.name);
  const form = el("form", { class: "item-edit", autocomplete: "off" }, el("span", { class: "name", text: item.name }), quantity, note, where,
    el("button", { type: "submit", text: t("page.tasks.edit.save") }),
    el("button", { type: "button", class: "plain", text: t("page.confirm.cancel"), onclick: leave }));
  form.addEventListener("keydown", (e) => { if (e.key === "Escape") leave(); });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const params = { item: item.id };
    if (quantity.value.trim() !== (item.quantity || "")) params.quantity = quantity.value.trim();
    if (note.value.trim() !== (item.note || "")) params.note = note.value.trim();
    editing = null;
    const to = where && where.value !== (currentList() ?? "") ? where.value : null;
    if (Object.keys(params).length > 1 || to !== null) {
      const apply = (x) => (x.id === item.id ? { ...x, ...("quantity" in params ? { quantity: params.quantity || undefined } : {}),
        ...("note" in params ? { note: params.note || undefined } : {}) } : x);
      try {
        await store.guess("shopping", (s) => ({ ...s, list: to !== null ? without(s.list, item.id) : s.list.map(apply) }), async () => {
          const was = { quantity: item.quantity || null, note: item.note || null };
          if (Object.keys(params).length > 1) await change("shop.edit", { ...params, was, ...onList() });
          if (to !== null) await call("shop.transfer", { item: item.id, to, ...onList() });
        });
        settled();
      } catch (error) { fail(error); }
    }
    leave();
    refresh("shopping");
  });
  changedInPlace.add(li);
  li.replaceChildren(form);
  quantity.focus();
  quantity.select();
}

// Rapid entry: Enter saves and opens the next row; Enter on an empty row (or Escape) ends it;
// leaving the row saves what it holds. The row lives in its own list under the items, so a
// refresh of the items (a remote change) never takes the focus from it.
function rapidRow() {
  const input = el("input", { class: "rapid", placeholder: t("page.shopping.rapid.placeholder"), maxlength: "200",
    "aria-label": t("page.shopping.rapid.input"), list: "shop-suggestions", autocomplete: "off" });
  const li = el("li", { class: "rapid-row" }, el("span", { class: "check", "aria-hidden": "true" }), input);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      const name = input.value.trim();
      if (!name) { endRapid(true); return; }
      input.value = "";
      addItems([name]);
    } else if (e.key === "Escape") { input.value = ""; endRapid(true); }
  });
  input.addEventListener("blur", () => {
    setTimeout(() => {
      if (!rapidActive || document.activeElement === input) return;
      const name = input.value.trim();
      input.value = "";
      if (name) addItems([name]);
      endRapid();
    }, 0);
  });
  return li;
}

function startRapid() {
  rapidActive = true;
  const rapid = $("shop-rapid");
  if (!rapid.querySelector("input.rapid")) rapid.append(rapidRow());
  rapid.hidden = false;
  $("shop-empty").hidden = true;
  const input = rapid.querySelector("input.rapid");
  input.focus();
  input.scrollIntoView({ block: "nearest" }); // clear of the tab bar (app.css: scroll-padding-bottom)
}

function endRapid(byKeyboard = false) {
  rapidActive = false;
  $("shop-rapid").replaceChildren();
  $("shop-rapid").hidden = true;
  render();
  if (byKeyboard) $("add-item").focus();
}

let pendingCount = 0;
async function addItems(names) {
  const temp = names.map((name) => ({ id: `pending-${++pendingCount}`, name, pending: true }));
  try {
    // The guessed rows, unless a reload already shows them (the feed can be faster than the answer).
    const shown = (s) => temp.filter((guess) => !s.list.some((item) => !item.pending && item.name.toLowerCase() === guess.name.toLowerCase()));
    const added = await store.guess("shopping", (s) => ({ ...s, list: [...s.list, ...shown(s)] }), () => change("shop.add", { names, ...onList() }));
    settled();
    // The agent says which came back from the restock pool (the rule lives there).
    const back = added.filter((item) => item.restocked);
    if (back.length) toast(t("page.shopping.restocked", { names: back.map((i) => i.name) }));
    // A name on the list already adds nothing (the agent's rule): said, not silently doubled.
    const twice = [...new Map(added.filter((item) => item.already).map((i) => [i.id, i.name])).values()];
    if (twice.length) toast(t("page.shopping.already", { names: twice }));
  } catch (error) {
    fail(error);
    giveBack(names);
  }
  refresh("shopping");
}

/** What was typed and not taken (the agent did not answer) goes back into the field, so that
 * nothing typed is lost: sent again with Enter once the agent is back. */
function giveBack(names) {
  if (!rapidActive) startRapid();
  const input = $("shop-rapid").querySelector("input.rapid");
  if (!input) return;
  input.value = [...names, input.value.trim()].filter(Boolean).join(", ");
}

async function clearAll() {
  const list = store.view("shopping")?.list || [];
  if (!list.length) return;
  const on = onList(); // the Undo undoes this list's clear, whichever list is shown by then
  try {
    await store.guess("shopping", (s) => ({ ...s, list: [] }), () => call("shop.clear", on));
    toast(t("page.shopping.cleared", { count: list.length }), { action: t("page.shopping.undo"), onAction: () => undoClear(on) });
  } catch (error) { fail(error); }
  refresh("shopping");
}

async function undoClear(on) {
  try { await call("shop.undo", on); toast(t("page.shopping.undone")); } catch (error) { fail(error); }
  refresh("shopping");
}

function wire() {
  renderOrder();
  $("order-added").addEventListener("click", () => chooseOrder("added"));
  $("order-shop").addEventListener("click", () => chooseOrder("shop"));
  $("add-item").addEventListener("click", startRapid);
  $("clear-all").addEventListener("click", clearAll);
  $("restock-toggle").addEventListener("click", () => {
    const sheet = $("restock-sheet");
    sheet.hidden = !sheet.hidden;
    $("restock-toggle").setAttribute("aria-expanded", String(!sheet.hidden));
  });
  $("new-items").addEventListener("click", () => {
    const rows = newItems.ids.map((id) => $("shop-list").querySelector(`li[data-id="${CSS.escape(id)}"]`)).filter(Boolean);
    rows[0]?.scrollIntoView({ behavior: "smooth", block: "center" });
    rows.forEach((row) => { row.classList.remove("highlight"); void row.offsetWidth; row.classList.add("highlight"); });
    newItems.ids = []; newItems.count = 0; renderNewItems();
  });
}
