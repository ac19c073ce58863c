// The Tasks tab: the focus rule's banner, adding, editing in place, completing, reopening,
// deleting (with undo); overdue tasks marked; every task done → a small success moment.
// The focus rule is the agent's: a refusal with the code `focus_rule` offers "Add it anyway".
import { call } from "./api.js";
import { $, el, toast, fail, describe, todayISO, formatDay, t } from "./ui.js";
import { register, store, refresh } from "./page.js";
import { me, members } from "./household.js";
import { celebrationsOn, allTasksDone } from "./celebrate.js";
import { tasksAfter } from "./live.js";

register({
  id: "tasks",
  tab: true,
  topics: ["task.", "task", "recurring_template", "member"],
  reads: ["tasks", "household"],
  after: tasksAfter,
  async load() { await store.load("tasks", () => call("task.list")); },
  render,
  wire,
});

function render() {
  renderAssignees();
  const tasks = store.view("tasks") || [];
  if (editing && $("task-list").querySelector("form.task-edit")) return; // a live update waits for the edit
  const active = tasks.filter((x) => !x.done);
  const done = tasks.filter((x) => x.done);
  $("task-list").replaceChildren(...active.map(taskRow));
  $("task-list").hidden = active.length === 0;
  $("done-list").replaceChildren(...done.map(taskRow));
  $("done-title").hidden = done.length === 0;
  $("done-list").hidden = done.length === 0;
  $("tasks-empty").hidden = tasks.length > 0;
  const limit = store.view("household")?.focusLimit;
  if (limit) {
    $("focus-rule").textContent = t("page.tasks.focus.rule", { limit });
    $("focus-count").textContent = t("page.tasks.focus.count", { active: active.length, limit });
  }
}

function renderAssignees() {
  const select = $("task-assignee");
  const chosen = select.value;
  select.replaceChildren(el("option", { value: "", text: t("page.tasks.nobody") }),
    ...members().map((m) => el("option", { value: m.name, text: m.isThisMachine ? t("page.tasks.assignee.me", { name: m.name }) : m.name })));
  select.value = members().some((m) => m.name === chosen) ? chosen : "";
}

function taskRow(task) {
  const meta = el("div", { class: "meta" });
  if (task.due) {
    const today = task.due === todayISO();
    // Dates as YYYY-MM-DD compare as text; past and not done is overdue.
    const overdue = !task.done && task.due < todayISO();
    meta.append(el("span", { class: today ? "today" : overdue ? "overdue" : "",
      text: today ? t("page.tasks.today") : overdue ? t("page.tasks.overdue", { date: formatDay(task.due) }) : formatDay(task.due) }));
  }
  if (task.assignee) {
    const mine = me() && task.assigneeID === me().id;
    meta.append(el("span", { class: "pill", text: mine ? t("page.tasks.me") : task.assignee, title: task.assignee }));
  }
  const li = el("li", { "data-id": task.id, class: task.done ? "done" : "" },
    el("button", { type: "button", class: "check square", "aria-pressed": String(task.done),
      "aria-label": t(task.done ? "page.tasks.reopen" : "page.tasks.complete", { title: task.title }), onclick: () => toggleTask(task) }),
    el("div", { class: "grow" }, el("span", { class: "name", text: task.title }), meta.childNodes.length ? meta : null),
    task.done ? null : el("button", { type: "button", class: "row-button edit", text: "✎", "aria-label": t("page.tasks.edit", { title: task.title }),
      onclick: () => editTask(task, li) }),
    el("button", { type: "button", class: "row-button remove", "aria-label": t("page.tasks.delete", { title: task.title }), text: "✕",
      onclick: () => deleteTask(task) }));
  return li;
}

// Editing in place: title, assignee, due date; Enter or Save keeps, Escape or Cancel leaves.
let editing = null;
function editTask(task, li) {
  editing = task.id;
  /** The edit ended (kept or left): the list as it is, the focus on the task's ✎ again. */
  const leave = () => {
    editing = null;
    render();
    const again = $("task-list").querySelector(`li[data-id="${CSS.escape(task.id)}"] .edit`);
    if (again instanceof HTMLElement) again.focus();
  };
  const title = el("input", { name: "title", value: task.title, maxlength: "200", required: true, "aria-label": t("page.tasks.edit.title") });
  const assignee = el("select", { name: "assignee", "aria-label": t("page.tasks.assignee") },
    el("option", { value: "", text: t("page.tasks.nobody") }),
    ...members().map((m) => el("option", { value: m.id, text: m.isThisMachine ? t("page.tasks.assignee.me", { name: m.name }) : m.name })));
  assignee.value = members().some((m) => m.id === task.assigneeID) ? task.assigneeID : "";
  const due = el("input", { name: "due", type: "date", value: task.due || "", "aria-label": t("page.tasks.due") });
  const form = el("form", { class: "task-edit", autocomplete: "off" }, title, assignee, due,
    el("button", { type: "submit", text: t("page.tasks.edit.save") }),
    el("button", { type: "button", class: "plain", text: t("page.confirm.cancel"), onclick: leave }));
  form.addEventListener("keydown", (e) => { if (e.key === "Escape") leave(); });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const params = { task: task.id };
    if (title.value.trim() !== task.title) params.title = title.value.trim();
    const chosen = members().find((m) => m.id === assignee.value);
    if ((assignee.value || null) !== (task.assigneeID || null)) params.assignee = chosen ? chosen.name : null;
    if ((due.value || null) !== (task.due || null)) params.due = due.value || null;
    editing = null;
    if (Object.keys(params).length > 1) {
      try { await call("task.edit", params); } catch (error) { fail(error); }
    }
    leave();
    refresh("tasks");
  });
  li.replaceChildren(form);
  title.focus();
  title.select();
}

let forceAction = null;
/** Shows the focus rule's refusal, with "Add it anyway" doing `force`. */
export function showFocusRefusal(error, force) {
  forceAction = force;
  $("focus-refusal-text").textContent = describe(error);
  $("focus-refusal").hidden = false;
  $("task-force").focus();
}

async function addTask(force = false) {
  const title = $("task-title").value.trim();
  if (!title) return;
  const params = { title, force };
  if ($("task-assignee").value) params.assignee = $("task-assignee").value;
  if ($("task-due").value) params.due = $("task-due").value;
  try {
    await call("task.add", params);
    $("task-form").reset(); $("focus-refusal").hidden = true; forceAction = null;
  } catch (error) {
    if (error.code === "focus_rule") showFocusRefusal(error, () => addTask(true)); else fail(error);
  }
  refresh("tasks");
}

// Sets the state the click asked for (a reload that already holds it is left as it is).
const settingDone = (id, done) => (tasks) => tasks.map((x) => (x.id === id ? { ...x, done } : x));

async function toggleTask(task) {
  try {
    await store.guess("tasks", settingDone(task.id, !task.done), () => call(task.done ? "task.reopen" : "task.done", { task: task.id }));
    const left = (store.view("tasks") || []).filter((x) => !x.done && x.id !== task.id).length;
    if (!task.done && left === 0 && celebrationsOn()) allTasksDone();
  } catch (error) {
    if (error.code === "focus_rule") {
      showFocusRefusal(error, async () => {
        try { await call("task.reopen", { task: task.id, force: true }); } catch (e) { fail(e); }
        refresh("tasks");
      });
    } else fail(error);
  }
  refresh("tasks");
}

async function deleteTask(task) {
  try {
    await store.guess("tasks", (tasks) => tasks.filter((x) => x.id !== task.id), () => call("task.delete", { task: task.id }));
    toast(t("page.tasks.deleted", { title: task.title }), { action: t("page.shopping.undo"), onAction: async () => {
      try { await call("task.undelete", { task: task.id }); } catch (error) { fail(error); }
      refresh("tasks");
    } });
  } catch (error) { fail(error); }
  refresh("tasks");
}

function wire() {
  $("task-form").addEventListener("submit", (e) => { e.preventDefault(); addTask(false); });
  $("task-force").addEventListener("click", async () => { $("focus-refusal").hidden = true; if (forceAction) await forceAction(); });
  $("task-refusal-close").addEventListener("click", () => { $("focus-refusal").hidden = true; });
}

