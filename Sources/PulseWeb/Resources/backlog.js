// The Backlog tab: projects in categories, added, renamed, reordered (drag and drop, or the
// keyboard: the ⠿ handle with ↑ / ↓, and Alt+↑ / Alt+↓ on a row), removed, promoted to tasks.
import { call } from "./api.js";
import { $, el, toast, fail, t, editInPlace } from "./ui.js";
import { register, store, refresh, switchTab } from "./page.js";
import { showFocusRefusal } from "./tasks.js";

register({
  id: "backlog",
  tab: true,
  topics: ["backlog_category", "backlog_item"],
  async load() { await store.load("backlog", () => call("backlog.list")); },
  render,
  // The categories are managed on a computer (a phone's document has neither the button nor the form).
  wire() { document.getElementById("goto-categories")?.addEventListener("click", () => { switchTab("more"); $("category-name").focus(); }); },
});

// What was typed into a category's field and not taken (the agent did not answer): shown
// there again when the list is drawn, so that nothing typed is lost.
const drafts = new Map();

function render() {
  const categories = store.view("backlog") || [];
  $("backlog-empty").hidden = categories.length > 0;
  $("backlog-list").replaceChildren(...categories.map((category) => {
    const input = el("input", { placeholder: t("page.backlog.add.placeholder"), maxlength: "200",
      "aria-label": t("page.backlog.add.label", { category: category.title }) });
    input.value = drafts.get(category.id) || "";
    const form = el("form", { class: "form-row", autocomplete: "off" }, input, el("button", { type: "submit", text: t("page.action.add") }));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const title = input.value.trim(); if (!title) return;
      input.value = "";
      try {
        await call("backlog.add", { title, category: category.id });
        drafts.delete(category.id);
      } catch (error) {
        fail(error);
        drafts.set(category.id, title);
        input.value = title;
      }
      refresh("backlog");
    });
    return el("section", { class: "card category", "data-id": category.id, "aria-label": category.title },
      el("h3", { text: category.title }),
      category.items.length ? el("ul", { class: "rows" }, ...category.items.map((item, index) => itemRow(category, item, index)))
        : el("p", { class: "muted", text: t("page.backlog.category.empty") }),
      form);
  }));
  if (focusAfter) {
    $("backlog-list").querySelector(`li[data-id="${CSS.escape(focusAfter)}"] .handle`)?.focus();
    focusAfter = null;
  }
}

let focusAfter = null; // the item whose handle keeps the focus after a keyboard move
let dragged = null;

function itemRow(category, item, index) {
  const name = el("span", { class: "grow name", text: item.title, role: "button", tabindex: "0", title: t("page.shopping.rename.title"),
    "aria-label": t("page.backlog.item.label", { title: item.title }) });
  const handle = el("button", { type: "button", class: "handle", text: "⠿",
    "aria-label": t("page.backlog.move.label", { title: item.title, position: index + 1, count: category.items.length }) });
  const li = el("li", { "data-id": item.id, draggable: "true" }, handle, name,
    el("button", { type: "button", class: "row-button", text: t("page.backlog.promote.button"),
      "aria-label": t("page.backlog.promote.label", { title: item.title }),
      onclick: () => promote(item) }),
    el("button", { type: "button", class: "row-button remove", text: "✕", "aria-label": t("page.backlog.remove.label", { title: item.title }),
      onclick: () => removeItem(item) }));
  const keys = (e) => {
    const step = e.key === "ArrowUp" ? -1 : e.key === "ArrowDown" ? 1 : 0;
    if (!step || (e.target !== handle && !e.altKey)) return;
    e.preventDefault();
    const position = index + 1 + step;
    if (position < 1 || position > category.items.length) return;
    focusAfter = item.id;
    move(item, { position });
  };
  handle.addEventListener("keydown", keys);
  li.addEventListener("keydown", (e) => { if (e.target !== handle) keys(e); });
  name.addEventListener("click", () => rename(item, name));
  name.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); rename(item, name); } });
  li.addEventListener("dragstart", (e) => { dragged = item; li.classList.add("dragging"); e.dataTransfer.effectAllowed = "move"; e.dataTransfer.setData("text/plain", item.id); });
  li.addEventListener("dragend", () => { dragged = null; li.classList.remove("dragging"); });
  li.addEventListener("dragover", (e) => { if (dragged && dragged.id !== item.id) { e.preventDefault(); li.classList.add("drop-target"); } });
  li.addEventListener("dragleave", () => li.classList.remove("drop-target"));
  li.addEventListener("drop", (e) => {
    e.preventDefault();
    li.classList.remove("drop-target");
    if (!dragged || dragged.id === item.id) return;
    move(dragged, { category: category.id, position: index + 1 });
  });
  return li;
}

/** @param {{ category?: string, position: number }} to */
async function move(item, to) {
  const { category, position } = to;
  const params = { item: item.id, position };
  if (category) params.category = category;
  try { await call("backlog.move", params); } catch (error) { focusAfter = null; fail(error); }
  refresh("backlog");
}

function rename(item, name) {
  editInPlace(name, {
    value: item.title, maxlength: 200, label: t("page.backlog.rename.label", { title: item.title }),
    save: (title) => call("backlog.rename", { item: item.id, title }),
    done: () => { render(); refresh("backlog"); },
  });
}

async function promote(item) {
  try {
    await call("backlog.promote", { item: item.id });
    toast(t("page.backlog.promoted", { title: item.title }));
  } catch (error) {
    if (error.code === "focus_rule") {
      switchTab("tasks");
      showFocusRefusal(error, async () => {
        try { await call("backlog.promote", { item: item.id, force: true }); } catch (e) { fail(e); }
        refresh("backlog", "tasks");
      });
    } else fail(error);
  }
  refresh("backlog", "tasks");
}

async function removeItem(item) {
  try {
    await call("backlog.remove", { item: item.id });
    // As on the shopping list: gone at once, with a moment to take it back.
    toast(t("page.backlog.removed", { title: item.title }), { action: t("page.shopping.undo"), onAction: () => restoreItem(item) });
  } catch (error) { fail(error); }
  refresh("backlog");
}

async function restoreItem(item) {
  try { await call("backlog.restore", { item: item.id }); } catch (error) { fail(error); }
  refresh("backlog");
}
