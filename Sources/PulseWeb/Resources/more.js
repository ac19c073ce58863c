// The More tab: the household's name and members, backlog categories, repeating tasks,
// settings, the machines and their sync, the backup.
import { call } from "./api.js";
import { $, el, fail, confirmDialog, applyAppearance } from "./ui.js";
import { register, store, refresh } from "./page.js";

register({
  id: "more",
  tab: true,
  topics: [],
  reads: ["household", "backlog", "recurring", "status"],
  async load() {},
  render,
  wire,
});

register({
  id: "recurring",
  topics: ["recurring_template"],
  async load() { store.set("recurring", await call("recurring.list")); },
  render() {},
});

function render() {
  renderHousehold();
  renderCategories();
  renderRecurring();
  renderMachines();
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
    el("span", { class: "grow", text: m.name + (m.isThisMachine ? " (this computer)" : "") }),
    el("button", { type: "button", class: "row-button", text: "✕", "aria-label": `Remove ${m.name}`, onclick: () => removeMember(m) }))));
  // Colours are set through the CSSOM (allowed by the CSP, unlike inline style attributes).
  $("member-list").querySelectorAll(".avatar").forEach((node, i) => { node.style.background = initialsColor(members[i]); });
  $("setting-celebrations").checked = !!household.settings.celebrations;
  $("setting-suggestions").checked = !!household.settings.suggestions;
}

function renderCategories() {
  const categories = store.view("backlog") || [];
  $("category-list").replaceChildren(...categories.map((c) => el("li", { "data-id": c.id },
    el("span", { class: "grow", text: `${c.title}` }),
    el("span", { class: "muted", text: `${c.items.length} item${c.items.length === 1 ? "" : "s"}` }),
    el("button", { type: "button", class: "row-button", text: "🗑", "aria-label": `Delete category ${c.title}`,
      onclick: () => removeCategory(c) }))));
}

async function removeCategory(category) {
  const force = category.items.length > 0;
  if (force && !(await confirmDialog("Delete Category?", `This contains active items: “${category.title}” has ${category.items.length}. They are deleted with it.`))) return;
  try { await call("backlog.category.remove", { category: category.id, force }); } catch (error) { fail(error); }
  refresh("backlog");
}

function renderRecurring() {
  const recurring = store.view("recurring") || [];
  $("recurring-list").replaceChildren(...recurring.map((r) => el("li", { "data-id": r.id },
    el("span", { class: "grow", text: r.title }), el("span", { class: "muted", text: r.schedule }),
    el("button", { type: "button", class: "row-button", text: "✕", "aria-label": `Stop repeating ${r.title}`,
      onclick: async () => { try { await call("recurring.remove", { template: r.id }); } catch (e) { fail(e); } refresh("recurring"); } }))));
  $("recurring-empty").hidden = recurring.length > 0;
}

function renderMachines() {
  const status = store.view("status");
  if (!status) return;
  const m = status.machine;
  const rows = [el("li", {}, el("span", { class: "grow", text: `This computer${m.member ? ` (${m.member})` : ""}` }),
    el("span", { class: "state ok", text: `${m.changes} changes` }))];
  for (const p of status.peers) {
    const text = p.problem ? "not in sync" : p.state === "connected" ? (p.inSync ? "connected, in sync" : "connected, syncing") : p.state;
    rows.push(el("li", {}, el("span", { class: "grow", text: p.name || "(unknown machine)" }),
      el("span", { class: `state ${p.state === "connected" && p.inSync ? "ok" : ""}`, text })));
    if (p.problem) rows.push(el("li", {}, el("span", { class: "grow muted", text: p.problem })));
  }
  for (const warning of m.warnings) rows.push(el("li", {}, el("span", { class: "grow muted", text: warning })));
  $("machine-list").replaceChildren(...rows);
}

async function removeMember(member) {
  if (!(await confirmDialog("Remove member?", `${member.name} is removed from the household on every computer.`, "Remove"))) return;
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
      await call("recurring.add", { title, schedule: $("recurring-schedule").value });
      $("recurring-title-input").value = "";
    } finally { refresh("recurring", "tasks"); }
  });
  for (const radio of document.querySelectorAll('input[name="appearance"]')) {
    radio.addEventListener("change", () => { applyAppearance(radio.value); setSetting("appearance", radio.value); });
  }
  $("setting-celebrations").addEventListener("change", (e) => setSetting("celebrations", String(e.target.checked)));
  $("setting-suggestions").addEventListener("change", (e) => setSetting("suggestions", String(e.target.checked)));
}
