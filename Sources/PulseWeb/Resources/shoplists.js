// The household's shopping lists (issue 57): the switcher above the list (one tap), a new list,
// the list shown renamed or deleted (a list holding items asks what becomes of them), and an
// item sent to another list. The list shown is this reader's choice, kept in this browser. No
// household rule lives here: names, doubles and what a deletion does are the agent's.
import { call } from "./api.js";
import { $, el, t, fail, toast, editInPlace, confirmDialog, drawRows } from "./ui.js";
import { refresh } from "./page.js";

const KEY = "pulse.shopping.list";

/** The id of the list shown; null: the household's first. */
export function currentList() {
  try { return localStorage.getItem(KEY) || null; } catch { return null; }
}
function remember(/** @type {string | null} */ id) {
  try { if (id) localStorage.setItem(KEY, id); else localStorage.removeItem(KEY); } catch { /* this page only */ }
}
/** The parameter naming the list shown, for every call on its items ({} on the first list). */
export function onList() {
  const id = currentList();
  return id ? { list: id } : {};
}
/** A list's name as this reader reads it (the first list's, in their language). */
export const listLabel = (/** @type {{name?: string | null}} */ list) => list.name ?? t("shop.first_list");

/** Loads `read(params)` for the list shown; a list deleted meanwhile (here or on another computer)
 * is forgotten, and `read` runs again for the first list (all of it: no part from the other). */
export async function forList(/** @type {(params: object) => Promise<any>} */ read) {
  try {
    return await read(onList());
  } catch (error) {
    if (error?.code !== "no_such_list") throw error;
    remember(null);
    return read({});
  }
}

/** The shopping part's load (shopping.js): a list chosen is shown once read. */
let load = async () => {};
export function useLoad(/** @type {() => Promise<void>} */ loader) { load = loader; }

async function choose(/** @type {string | null} */ id) {
  const before = currentList();
  if (id === before) return;
  remember(id);
  try {
    await load();
  } catch {
    // No computer answers: a phone holds only the list it showed; the others come back with one.
    remember(before);
    toast(t("page.shopping.lists.offline"));
  }
}

/** The switcher's buttons drawn last (ui.drawRows). */
const switcher = new Map();

/** The switcher: one button per list with its count, the one shown pressed; "+ List"; and the
 * shown list's rename and delete when it is not the first. `shownCount`: the items the list
 * shown has on the screen (with the page's guesses and a phone's queued changes), its count. */
export function renderLists(/** @type {Array<{id?: string, name?: string, active: number, restock: number}>} */ lists,
  /** @type {number | undefined} */ shownCount = undefined) {
  const current = currentList();
  if (current && lists.length && !lists.some((list) => list.id === current)) remember(null);
  const shown = lists.find((list) => (list.id ?? null) === currentList()) || lists[0];
  // A button that did not change is kept (ui.drawRows): a tap or the keyboard's focus on it
  // survives a live update that redraws the switcher.
  const buttons = lists.map((list) => ({ id: list.id ?? "", label: listLabel(list), pressed: list === shown,
    count: String(list === shown && shownCount !== undefined ? shownCount : list.active) }));
  drawRows($("shop-lists"), switcher, [...buttons, null], (b) => JSON.stringify(b ?? t("page.shopping.lists.add")),
    (b) => b ? el("button", { type: "button", "data-list": b.id, "aria-pressed": String(b.pressed), onclick: () => choose(b.id || null) },
      b.label, " ", el("span", { class: "badge", text: b.count }))
      : el("button", { type: "button", id: "list-add", class: "plain", text: t("page.shopping.lists.add"), onclick: addList }));
  const named = shown && shown.id ? shown : null;
  $("list-actions").hidden = !named;
  const rename = $("list-rename"), remove = $("list-delete");
  if (rename) rename.onclick = named ? () => renameList(named) : null;
  if (remove) remove.onclick = named ? () => deleteList(named, lists[0]) : null;
  $("shop-list").setAttribute("aria-label", shown ? listLabel(shown) : t("page.shopping.list.label"));
}

function addList() {
  const field = el("span");
  $("list-add").replaceWith(field);
  editInPlace(field, {
    value: "", maxlength: 60, label: t("page.shopping.lists.new_name"),
    save: async (name) => { const list = await call("shop.lists.add", { name }); remember(list.id); },
    done: () => refresh("shopping"),
  });
}

function renameList(/** @type {{id?: string, name?: string}} */ list) {
  // The field goes beside the button, hidden meanwhile: the button stays in the page (a render
  // wires it), and the field leaves when the edit ends.
  const button = $("list-rename");
  const field = el("span");
  button.hidden = true;
  button.after(field);
  editInPlace(field, {
    value: list.name, maxlength: 60, label: t("page.shopping.lists.rename.label", { name: list.name }),
    save: (name) => call("shop.lists.rename", { list: list.id, name }),
    done: () => {
      $("list-actions").querySelector("input.edit")?.remove();
      button.hidden = false;
      refresh("shopping");
    },
  });
}

async function deleteList(/** @type {{id?: string, name?: string, active: number, restock: number}} */ shown, first) {
  // The counts as the agent holds them now (what is drawn may be a moment old: a live update
  // shows an item before the lists are read again).
  let list = shown;
  try { list = (await call("shop.lists")).find((x) => x.id === shown.id) || shown; } catch { /* the counts drawn */ }
  const count = list.active + list.restock;
  const title = t("page.shopping.lists.delete_title", { name: list.name });
  let items;
  if (count === 0) {
    if (!(await confirmDialog(title, t("page.shopping.lists.delete_empty")))) return;
  } else {
    items = await chooseItems(title, t("page.shopping.lists.delete_text", { count }), t("page.shopping.lists.move_items", { name: listLabel(first) }));
    if (!items) return;
  }
  try {
    await call("shop.lists.delete", { list: list.id, ...(items ? { items } : {}) });
    remember(null);
    toast(t("page.shopping.lists.deleted", { name: list.name }));
  } catch (error) { fail(error); }
  refresh("shopping");
}

/** Asks what becomes of a list's items: "move", "delete", or null (cancelled). */
function chooseItems(title, text, moveLabel) {
  const dialog = $("list-delete-dialog");
  $("list-delete-title").textContent = title;
  $("list-delete-text").textContent = text;
  $("list-delete-move").textContent = moveLabel;
  return new Promise((resolve) => {
    const finish = (answer) => { dialog.close(); resolve(answer); };
    $("list-delete-move").onclick = () => finish("move");
    $("list-delete-items").onclick = () => finish("delete");
    $("list-delete-cancel").onclick = () => finish(null);
    dialog.oncancel = () => resolve(null);
    dialog.showModal();
  });
}

/** A select of the lists for an item's edit form, the item's own chosen; null with one list. */
export function listSelect(/** @type {Array<{id?: string, name?: string}>} */ lists, /** @type {string} */ itemName) {
  if (!lists || lists.length < 2) return null;
  const current = currentList() ?? "";
  return el("select", { name: "list", class: "item-list", "aria-label": t("page.shopping.item_list", { name: itemName }) },
    ...lists.map((list) => el("option", { value: list.id ?? "", text: listLabel(list), ...((list.id ?? "") === current ? { selected: "" } : {}) })));
}
