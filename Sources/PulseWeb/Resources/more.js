// The More tab: the household's name and members, backlog categories, repeating tasks,
// settings, the language, the backup (the computers: machines.js). All of it the computer's
// own (`computerOnly`): a phone's More tab holds the days away (rotation.js), its home screen
// and its notices (notices.js).
import { call } from "./api.js";
import { $, $$, el, fail, confirmDialog, applyAppearance, t, language, editInPlace } from "./ui.js";
import { register, store, refresh } from "./page.js";
import { rotationLines, swapButton, chosenRotation, drawTakers } from "./rotation.js";

register({
  id: "more",
  tab: true,
  computerOnly: true,
  topics: [],
  reads: ["household", "backlog", "recurring"],
  async load() {},
  render,
  wire,
});

// The language: this computer's member's (on every computer) and this computer's own.
// The agent's session says which languages there are and who chose which
// (`languages`: {available, member, machine, memberName}); without it, no chooser.
register({
  id: "language",
  computerOnly: true,
  topics: [],
  reads: ["session"],
  async load() {},
  render: renderLanguages,
  wire() {
    for (const scope of ["member", "machine"]) $(`language-${scope}`).addEventListener("change", (e) => setLanguage(scope, e.target.value));
  },
});

register({
  id: "recurring",
  computerOnly: true,
  // A rotation's next turns move with the tasks done, the days away and the swaps.
  topics: ["recurring_template", "away", "rotation_swap", "task.", "task", "member"],
  async load() { await store.load("recurring", () => call("recurring.list")); },
  render() {},
});

function render() {
  renderHousehold();
  renderCategories();
  renderRecurring();
  drawWeekdays();
}

// Each language by its own name, the same whatever language the page is in; a household's
// own language by the name the browser knows for it in that language, else by its tag.
const languageNames = { en: "English", pl: "Polski", de: "Deutsch", nl: "Nederlands" };
function ownName(code) {
  if (languageNames[code]) return languageNames[code];
  try { return new Intl.DisplayNames([code], { type: "language" }).of(code) || code; } catch { return code; }
}

function renderLanguages() {
  const languages = store.view("session")?.languages;
  $("language").hidden = !languages;
  if (!languages) return;
  for (const scope of ["member", "machine"]) {
    const select = $(`language-${scope}`);
    select.replaceChildren(el("option", { value: "", text: t("page.more.language.automatic") }),
      ...(languages.available || []).map((code) => el("option", { value: code, lang: code, text: ownName(code) })));
    select.value = languages[scope] || "";
  }
  $("language-member-row").hidden = !languages.memberName;
  $("language-member-label").textContent = languages.memberName ? t("page.more.language.member", { name: languages.memberName }) : "";
}

async function setLanguage(scope, chosen) {
  try {
    await call("language.set", { scope, language: chosen || null });
  } catch (error) {
    fail(error);
    renderLanguages();
    return;
  }
  location.reload(); // the page's words, in the language now chosen
}

function initialsColor(member) { return /^#[0-9a-fA-F]{6}$/.test(member.color || "") ? member.color : "#6B7280"; }

function renderHousehold() {
  const household = store.view("household");
  if (!household) return;
  const input = $("household-input");
  if (document.activeElement !== input) input.value = household.name;
  const members = household.members;
  $("member-list").replaceChildren(...members.map((m) => el("li", { "data-id": m.id },
    el("span", { class: "avatar", "aria-hidden": "true", text: m.initials }),
    el("span", { class: "grow", text: m.isThisMachine ? t("page.more.member.this_computer", { name: m.name }) : m.name }),
    el("button", { type: "button", class: "row-button", text: "✕", "aria-label": t("page.more.member.remove", { name: m.name }),
      onclick: () => removeMember(m) }))));
  // Colours are set through the CSSOM (allowed by the CSP, unlike inline style attributes).
  $("member-list").querySelectorAll(".avatar").forEach((node, i) => { node.style.background = initialsColor(members[i]); });
  $("setting-celebrations").checked = !!household.settings.celebrations;
  $("setting-suggestions").checked = !!household.settings.suggestions;
}

// Categories: renamed in place, reordered with the ⠿ handle and ↑ / ↓ (the backlog's order).
let focusCategory = null;
function renderCategories() {
  const categories = store.view("backlog") || [];
  $("category-list").replaceChildren(...categories.map((c, index) => {
    const name = el("span", { class: "grow name", text: c.title, role: "button", tabindex: "0",
      "aria-label": t("page.more.category.label", { title: c.title }) });
    const handle = el("button", { type: "button", class: "handle", text: "⠿",
      "aria-label": t("page.backlog.move.label", { title: c.title, position: index + 1, count: categories.length }) });
    handle.addEventListener("keydown", async (e) => {
      const step = e.key === "ArrowUp" ? -1 : e.key === "ArrowDown" ? 1 : 0;
      const position = index + 1 + step;
      if (!step || position < 1 || position > categories.length) return;
      e.preventDefault();
      focusCategory = c.id;
      try { await call("backlog.category.move", { category: c.id, position }); } catch (error) { focusCategory = null; fail(error); }
      refresh("backlog");
    });
    const rename = () => renameCategory(c, name);
    name.addEventListener("click", rename);
    name.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); rename(); } });
    return el("li", { "data-id": c.id }, handle, name,
      el("span", { class: "muted", text: t("page.more.category.items", { count: c.items.length }) }),
      el("button", { type: "button", class: "row-button", text: "🗑", "aria-label": t("page.more.category.delete", { title: c.title }),
        onclick: () => removeCategory(c) }));
  }));
  if (focusCategory) {
    $("category-list").querySelector(`li[data-id="${CSS.escape(focusCategory)}"] .handle`)?.focus();
    focusCategory = null;
  }
}

function renameCategory(category, name) {
  editInPlace(name, {
    value: category.title, maxlength: 100, label: t("page.backlog.rename.label", { title: category.title }),
    save: (title) => call("backlog.category.rename", { category: category.id, title }),
    done: () => { renderCategories(); refresh("backlog"); },
  });
}

async function removeCategory(category) {
  const force = category.items.length > 0;
  const text = t("page.more.category.confirm_delete.text", { title: category.title, count: category.items.length });
  if (force && !(await confirmDialog(t("page.more.category.confirm_delete.title"), text))) return;
  try { await call("backlog.category.remove", { category: category.id, force }); } catch (error) { fail(error); }
  refresh("backlog");
}

function renderRecurring() {
  const recurring = store.view("recurring") || [];
  $("recurring-list").replaceChildren(...recurring.map((r) => el("li", { "data-id": r.id },
    el("span", { class: "grow stacked" }, el("span", { class: "title", text: r.title }), ...rotationLines(r)),
    el("span", { class: "muted", text: describeSchedule(r.schedule) }), ...swapButton(r),
    el("button", { type: "button", class: "row-button", text: "✕", "aria-label": t("page.more.recurring.stop", { title: r.title }),
      onclick: async () => { try { await call("recurring.remove", { template: r.id }); } catch (e) { fail(e); } refresh("recurring"); } }))));
  $("recurring-empty").hidden = recurring.length > 0;
  drawTakers();
}

// The repeating task's schedule, as the CLI takes it (`daily`, `weekly:mon,thu`,
// `monthly:15`): any days of the week, any day of the month; said in words as it is chosen.
function chosenSchedule() {
  const kind = $("recurring-kind").value;
  if (kind === "weekly") {
    const days = $$('#recurring-days input:checked').map((box) => box.value);
    return `weekly:${days.join(",")}`;
  }
  if (kind === "monthly") return `monthly:${$("recurring-day").value}`;
  return "daily";
}

function renderSchedule() {
  const kind = $("recurring-kind").value;
  $("recurring-days").hidden = kind !== "weekly";
  $("recurring-day").hidden = kind !== "monthly";
  const schedule = chosenSchedule();
  const valid = schedule !== "weekly:" && !(kind === "monthly" && !/^([1-9]|[12]\d|3[01])$/.test($("recurring-day").value));
  $("recurring-preview").textContent = valid ? t("page.more.recurring.preview", { schedule: describeSchedule(schedule) }) : t("page.more.recurring.pick");
}

// The weekday boxes, named in the page's language (known once the page has its words).
function drawWeekdays() {
  const box = $("recurring-days");
  if (box.dataset.language === language()) return;
  const checked = new Set([...box.querySelectorAll("input:checked")].map((input) => input.value));
  if (!box.dataset.language) checked.add("mon");
  box.dataset.language = language();
  const name = new Intl.DateTimeFormat(language(), { weekday: "short", timeZone: "UTC" });
  box.querySelectorAll("label").forEach((label) => label.remove());
  // 1 January 2024 was a Monday.
  box.append(...weekdays.map((day, i) => el("label", {}, el("input", { type: "checkbox", value: day, checked: checked.has(day) }),
    name.format(Date.UTC(2024, 0, 1 + i)))));
  renderSchedule();
}

function wireSchedule() {
  for (const id of ["recurring-kind", "recurring-day", "recurring-days"]) $(id).addEventListener("input", renderSchedule);
  $("recurring-days").addEventListener("change", renderSchedule);
}

// A schedule (`daily`, `weekly:mon,thu`, `monthly:15`) in words: weekday names and their
// list from Intl in the page's language, the sentence from the catalogue.
const weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
export function describeSchedule(schedule) {
  if (schedule === "daily") return t("page.schedule.daily");
  const weekly = /^weekly:([a-z,]+)$/.exec(schedule || "");
  if (weekly && weekly[1].split(",").every((day) => weekdays.includes(day))) {
    const name = new Intl.DateTimeFormat(language(), { weekday: "long", timeZone: "UTC" });
    // 1 January 2024 was a Monday.
    const days = weekly[1].split(",").map((day) => name.format(Date.UTC(2024, 0, 1 + weekdays.indexOf(day))));
    return t("page.schedule.weekly", { days: new Intl.ListFormat(language(), { type: "conjunction" }).format(days) });
  }
  const monthly = /^monthly:(\d+)$/.exec(schedule || "");
  if (monthly) {
    const day = Number(monthly[1]);
    return t("page.schedule.monthly", { day, ordinal: new Intl.PluralRules(language(), { type: "ordinal" }).select(day) });
  }
  return schedule || "";
}

async function removeMember(member) {
  if (!(await confirmDialog(t("page.more.member.confirm_remove.title"), t("page.more.member.confirm_remove.text", { name: member.name }),
    t("page.more.member.confirm_remove.ok")))) return;
  try { await call("member.remove", { member: member.id }); } catch (error) { fail(error); }
  refresh("household", "tasks");
}

async function setSetting(key, value) {
  try { await call("settings.set", { key, value }); } catch (error) { fail(error); }
  refresh("household");
}

async function submitted(form, body) {
  $(form).addEventListener("submit", async (e) => {
    e.preventDefault();
    try { await body(); } catch (error) { fail(error); }
  });
}

function wire() {
  submitted("household-form", async () => {
    try { await call("household.rename", { name: $("household-input").value }); } finally { refresh("household"); }
  });
  submitted("member-form", async () => {
    const name = $("member-name").value.trim(); if (!name) return;
    try { await call("member.add", { name }); $("member-name").value = ""; } finally { refresh("household"); }
  });
  submitted("category-form", async () => {
    const title = $("category-name").value.trim(); if (!title) return;
    try { await call("backlog.category.add", { title }); $("category-name").value = ""; } finally { refresh("backlog"); }
  });
  submitted("recurring-form", async () => {
    const title = $("recurring-title-input").value.trim(); if (!title) return;
    try {
      const rotation = chosenRotation();
      await call("recurring.add", { title, schedule: chosenSchedule(), ...(rotation.length ? { rotation } : {}) });
      $("recurring-title-input").value = "";
      for (const box of $$("#recurring-rotation input")) box.checked = false;
    } finally { refresh("recurring", "tasks"); }
  });
  wireSchedule();
  for (const radio of $$('input[name="appearance"]')) {
    radio.addEventListener("change", () => { applyAppearance(radio.value); setSetting("appearance", radio.value); });
  }
  $("setting-celebrations").addEventListener("change", (e) => setSetting("celebrations", String(e.target.checked)));
  $("setting-suggestions").addEventListener("change", (e) => setSetting("suggestions", String(e.target.checked)));
}
