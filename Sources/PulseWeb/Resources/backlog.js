// The Backlog tab: projects in categories, added, removed, promoted to tasks.
import { call } from "./api.js";
import { $, el, toast, fail, t } from "./ui.js";
import { register, store, refresh, switchTab } from "./page.js";
import { showFocusRefusal } from "./tasks.js";

register({
  id: "backlog",
  tab: true,
  topics: ["backlog_category", "backlog_item"],
  async load() { store.set("backlog", await call("backlog.list")); },
  render,
  wire() { $("goto-categories").addEventListener("click", () => { switchTab("more"); $("category-name").focus(); }); },
});

function render() {
  const categories = store.view("backlog") || [];
  $("backlog-empty").hidden = categories.length > 0;
  $("backlog-list").replaceChildren(...categories.map((category) => {
    const input = el("input", { placeholder: t("page.backlog.add.placeholder"), maxlength: "200",
      "aria-label": t("page.backlog.add.label", { category: category.title }) });
    const form = el("form", { class: "form-row", autocomplete: "off" }, input, el("button", { type: "submit", text: t("page.action.add") }));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const title = input.value.trim(); if (!title) return;
      input.value = "";
      try { await call("backlog.add", { title, category: category.id }); } catch (error) { fail(error); }
      refresh("backlog");
    });
    return el("section", { class: "card category", "data-id": category.id, "aria-label": category.title },
      el("h3", { text: category.title }),
      category.items.length ? el("ul", { class: "rows" }, ...category.items.map((item) => el("li", { "data-id": item.id },
        el("span", { class: "dot", "aria-hidden": "true" }),
        el("span", { class: "grow name", text: item.title }),
        el("button", { type: "button", class: "row-button", text: t("page.backlog.promote.button"),
          "aria-label": t("page.backlog.promote.label", { title: item.title }),
          onclick: () => promote(item) }),
        el("button", { type: "button", class: "row-button", text: "✕", "aria-label": t("page.backlog.remove.label", { title: item.title }),
          onclick: () => removeItem(item) })))) : el("p", { class: "muted", text: t("page.backlog.category.empty") }),
      form);
  }));
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
  try { await call("backlog.remove", { item: item.id }); } catch (error) { fail(error); }
  refresh("backlog");
}
