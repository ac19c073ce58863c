// House Pulse — the family's page. Plain JS, no build step. Every change goes through the
// agent's JSON API (POST /api/call/<method>, the same methods and rules as the CLI); the
// live feed (GET /api/events, Server-Sent Events) tells the page what changed anywhere.
// Text from the household is always set with textContent, never parsed as HTML.
"use strict";

const state = {
  csrf: null, tab: "shopping", me: null,
  household: null, members: [], settings: {}, shop: [], pool: [], tasks: [], backlog: [], recurring: [],
  kids: [], catalogue: [], kid: null, kidView: "earn", ledger: [], basket: [], status: null,
  newItems: [], online: true, everOnline: false,
};

// ---------- small helpers ----------
const $ = (id) => document.getElementById(id);
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}
function todayISO() {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}
function initialsColor(member) { return /^#[0-9a-fA-F]{6}$/.test(member.color || "") ? member.color : "#6B7280"; }

class APIError extends Error {}

// ---------- the agent ----------
async function request(path, options = {}) {
  let response;
  try {
    response = await fetch(path, { credentials: "same-origin", ...options });
  } catch (error) {
    setOnline(false);
    throw new APIError("House Pulse on this computer did not answer.");
  }
  if (response.status === 401) { signedOut(); throw new APIError("Not signed in."); }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new APIError(body.error || `refused (${response.status})`);
  return body;
}
async function call(method, params = {}) {
  const body = await request(`/api/call/${method}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Pulse-CSRF": state.csrf },
    body: JSON.stringify(params),
  });
  return body.result;
}

// ---------- toasts, banners, dialogs ----------
let toastTimer = null;
function toast(text, { action, onAction, error = false, seconds = 4 } = {}) {
  const box = $("toast");
  $("toast-text").textContent = text;
  const button = $("toast-action");
  button.hidden = !action;
  button.textContent = action || "";
  button.onclick = action ? () => { hideToast(); onAction(); } : null;
  box.classList.toggle("error", error);
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(hideToast, seconds * 1000);
}
function hideToast() { $("toast").hidden = true; }
function fail(error) { toast(error.message || String(error), { error: true, seconds: 6 }); }

function confirmDialog(title, text, ok = "Delete") {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-ok").textContent = ok;
  return new Promise((resolve) => {
    const finish = (answer) => { dialog.close(); resolve(answer); };
    $("confirm-ok").onclick = () => finish(true);
    $("confirm-cancel").onclick = () => finish(false);
    dialog.oncancel = () => resolve(false);
    dialog.showModal();
  });
}

function setOnline(online) {
  if (state.online === online) return;
  state.online = online;
  $("offline").hidden = online;
}
function signedOut() {
  document.querySelectorAll(".tab").forEach((tab) => { tab.hidden = true; });
  document.querySelector(".tabbar").hidden = true;
  $("signed-out").hidden = false;
  if (events) { events.close(); events = null; }
}

// ---------- appearance ----------
// "system" follows the browser's colour scheme, also when it changes while the page is open.
const systemDark = window.matchMedia("(prefers-color-scheme: dark)");
let appearanceSetting = "system";
function applyAppearance(appearance) {
  appearanceSetting = ["light", "dark"].includes(appearance) ? appearance : "system";
  const dark = appearanceSetting === "dark" || (appearanceSetting === "system" && systemDark.matches);
  document.documentElement.dataset.appearance = dark ? "dark" : "light";
  for (const radio of document.querySelectorAll('input[name="appearance"]')) radio.checked = radio.value === appearanceSetting;
}
systemDark.addEventListener("change", () => applyAppearance(appearanceSetting));

// ---------- loading ----------
async function loadHousehold() {
  const [household, status] = await Promise.all([call("household.get"), request("/api/status")]);
  state.household = household;
  state.members = household.members;
  state.settings = household.settings;
  state.me = household.members.find((m) => m.isThisMachine) || null;
  state.status = status;
  applyAppearance(household.settings.appearance);
  renderHeader(); renderMore(); renderAssignees();
}
async function loadShopping() {
  [state.shop, state.pool] = await Promise.all([call("shop.list"), call("shop.list", { pool: "restock" })]);
  renderShopping();
}
async function loadTasks() { state.tasks = await call("task.list"); renderTasks(); }
async function loadBacklog() { state.backlog = await call("backlog.list"); renderBacklog(); renderCategories(); }
async function loadRecurring() { state.recurring = await call("recurring.list"); renderRecurring(); }
async function loadStatus() { state.status = await request("/api/status"); renderHeader(); renderMachines(); }
async function loadKids() {
  [state.kids, state.catalogue] = await Promise.all([call("kids.list"), call("kids.catalogue.list").catch(() => [])]);
  if (!state.kids.some((k) => k.id === state.kid)) state.kid = state.kids.length ? state.kids[0].id : null;
  if (state.kid) {
    [state.ledger, state.basket] = await Promise.all([call("kids.history.list", { kid: state.kid }), call("kids.basket.list", { kid: state.kid })]);
  } else { state.ledger = []; state.basket = []; }
  renderKids();
}
const loaders = { household: loadHousehold, shopping: loadShopping, tasks: loadTasks, backlog: loadBacklog,
  recurring: loadRecurring, status: loadStatus, kids: loadKids };
async function loadAll() {
  await loadHousehold();
  await Promise.all([loadShopping(), loadTasks(), loadBacklog(), loadRecurring(), loadKids()]);
}

// Refreshes gathered over a moment: a burst of events reloads each part once.
const dirty = new Set();
let refreshTimer = null;
function refresh(...parts) {
  parts.forEach((part) => dirty.add(part));
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(async () => {
    const due = [...dirty];
    dirty.clear();
    for (const part of due) { try { await loaders[part](); } catch (error) { if (!(error instanceof APIError)) console.error(error); } }
  }, 30);
}

// ---------- the live feed ----------
let events = null;
function connectEvents() {
  events = new EventSource("/api/events");
  events.addEventListener("hello", (message) => {
    const hello = JSON.parse(message.data);
    const wasOffline = !state.online || hello.gap;
    setOnline(true);
    if (wasOffline && state.everOnline) loadAll().catch(fail); // missed changes: reload what is shown
    state.everOnline = true;
  });
  events.onmessage = (message) => onEvent(JSON.parse(message.data));
  events.onerror = () => {
    setOnline(false);
    if (events.readyState === EventSource.CLOSED) {
      // The browser gave up (e.g. the agent answered 401 after a restart): try again later.
      request("/api/session").then(() => setTimeout(connectEvents, 1000)).catch(() => setTimeout(connectEvents, 3000));
    }
  };
}
const topicParts = {
  shopping_item: ["shopping"], task: ["tasks"], recurring_template: ["recurring", "tasks"],
  backlog_category: ["backlog"], backlog_item: ["backlog"], member: ["household", "tasks"], setting: ["household"],
  household: ["household"], kid: ["kids"], catalogue_selection: ["kids"], ledger_entry: ["kids"],
};
function onEvent(event) {
  if (event.type.startsWith("shopping.")) refresh("shopping");
  else if (event.type.startsWith("task.")) refresh("tasks");
  else if (event.type.startsWith("kid.")) refresh("kids");
  else if (event.type.startsWith("peer.") || event.type === "conflict") refresh("status");
  else refresh(...(topicParts[event.entity] || ["household", "status"]));
  if (event.type === "shopping.added" && !event.local) {
    if (event.row) state.newItems.push(event.row);
    state.newCount = (state.newCount || 0) + (event.count || 1);
    renderNewItems();
  }
}
function renderNewItems() {
  const banner = $("new-items");
  const show = state.newCount > 0 && state.tab === "shopping";
  banner.hidden = !show;
  if (show) banner.textContent = `New items added (${state.newCount})`;
}

// ---------- header ----------
function renderHeader() {
  if (state.household) { $("household-name").textContent = state.household.name; document.title = `${state.household.name} — House Pulse`; }
  const status = state.status;
  if (!status) return;
  const connected = status.peers.filter((p) => p.state === "connected");
  const refused = status.peers.some((p) => p.problem);
  $("sync-state").textContent = connected.length
    ? `${connected.length} other computer${connected.length === 1 ? "" : "s"} connected${refused ? ", not in sync: see More" : connected.every((p) => p.inSync) ? ", in sync" : ", syncing"}`
    : (status.peers.length ? "Other computers not reachable: changes wait here" : "This computer only");
}

// ---------- Shopping ----------
function renderShopping() {
  const list = $("shop-list");
  list.replaceChildren(...state.shop.map(shopRow));
  $("shop-count").textContent = state.shop.length;
  $("shop-empty").hidden = state.shop.length > 0 || rapidActive;
  list.hidden = state.shop.length === 0;
  $("restock-count").textContent = state.pool.length;
  $("restock-list").replaceChildren(...state.pool.map(poolRow));
  $("restock-empty").hidden = state.pool.length > 0;
}
function shopRow(item) {
  const name = el("span", { class: "name", text: item.name, title: "Rename", role: "button", tabindex: "0",
    "aria-label": `${item.name} (rename)` });
  const li = el("li", { "data-id": item.id, class: item.pending ? "pending" : "" },
    el("button", { type: "button", class: "check", "aria-pressed": "false", "aria-label": `Check off ${item.name}`,
      onclick: () => checkItem(item, li) }),
    el("span", { class: "grow" }, name));
  const rename = () => startRename(item, li, name);
  name.addEventListener("click", rename);
  name.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); rename(); } });
  return li;
}
function poolRow(item) {
  return el("li", { "data-id": item.id },
    el("span", { class: "grow name", text: item.name }),
    el("button", { type: "button", class: "row-button restock", "aria-label": `Put ${item.name} back on the list`, text: "+",
      onclick: () => restockItem(item) }));
}
async function checkItem(item, li) {
  li.classList.add("leaving");
  state.shop = state.shop.filter((x) => x.id !== item.id);
  state.pool = [{ ...item, state: "restock" }, ...state.pool];
  setTimeout(() => { renderShopping(); pulse($("restock-toggle")); }, 250);
  try { await call("shop.check", { item: item.id }); } catch (error) { fail(error); }
  refresh("shopping");
}
async function restockItem(item) {
  state.pool = state.pool.filter((x) => x.id !== item.id);
  state.shop = [...state.shop, { ...item, state: "active" }];
  renderShopping();
  try { await call("shop.restock", { item: item.id }); } catch (error) { fail(error); }
  refresh("shopping");
}
function pulse(node) { node.classList.remove("pulse"); void node.offsetWidth; node.classList.add("pulse"); }
function startRename(item, li, name) {
  const input = el("input", { class: "edit", value: item.name, maxlength: "200", "aria-label": `Rename ${item.name}` });
  name.replaceWith(input);
  input.focus(); input.select();
  let done = false;
  const finish = async (save) => {
    if (done) return; done = true;
    const text = input.value.trim();
    if (!save || !text || text === item.name) { renderShopping(); return; }
    item.name = text; renderShopping();
    try { await call("shop.rename", { item: item.id, name: text }); } catch (error) { fail(error); }
    refresh("shopping");
  };
  input.addEventListener("keydown", (e) => { if (e.key === "Enter") finish(true); if (e.key === "Escape") finish(false); });
  input.addEventListener("blur", () => finish(true));
}

// Rapid entry: Enter saves and opens the next row; Enter on an empty row (or Escape) ends it;
// leaving the row saves what it holds. The row lives in its own list under the items, so a
// refresh of the items (a remote change) never takes the focus from it.
let rapidActive = false;
function rapidRow() {
  const input = el("input", { class: "rapid", placeholder: "Item name", maxlength: "200", "aria-label": "New item" });
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
  rapid.querySelector("input.rapid").focus();
}
function endRapid(byKeyboard = false) {
  rapidActive = false;
  $("shop-rapid").replaceChildren();
  $("shop-rapid").hidden = true;
  renderShopping();
  if (byKeyboard) $("add-item").focus();
}
async function addItems(names) {
  const temp = names.map((name, i) => ({ id: `pending-${Date.now()}-${i}`, name, pending: true }));
  state.shop = [...state.shop, ...temp];
  renderShopping();
  try {
    const added = await call("shop.add", { names });
    const back = added.filter((item) => state.pool.some((p) => p.id === item.id));
    if (back.length) toast(`Back from the restock pool: ${back.map((i) => i.name).join(", ")}`);
  } catch (error) { fail(error); }
  refresh("shopping");
}
async function clearAll() {
  if (!state.shop.length) return;
  const before = state.shop;
  state.shop = []; renderShopping();
  try {
    await call("shop.clear");
    toast(`Cleared ${before.length} item${before.length === 1 ? "" : "s"}`, { action: "Undo", onAction: undoClear });
  } catch (error) { state.shop = before; renderShopping(); fail(error); }
  refresh("shopping");
}
async function undoClear() {
  try { await call("shop.undo"); toast("The list is back."); } catch (error) { fail(error); }
  refresh("shopping");
}

// ---------- Tasks ----------
function renderAssignees() {
  const select = $("task-assignee");
  const chosen = select.value;
  select.replaceChildren(el("option", { value: "", text: "Nobody" }),
    ...state.members.map((m) => el("option", { value: m.name, text: m.isThisMachine ? `${m.name} (me)` : m.name })));
  select.value = state.members.some((m) => m.name === chosen) ? chosen : "";
}
function taskRow(task) {
  const meta = el("div", { class: "meta" });
  if (task.due) {
    const today = task.due === todayISO();
    meta.append(el("span", { class: today ? "today" : "", text: today ? "Today" : task.due }));
  }
  if (task.assignee) {
    const mine = state.me && task.assigneeID === state.me.id;
    meta.append(el("span", { class: "pill", text: mine ? "Me" : task.assignee, title: task.assignee }));
  }
  const li = el("li", { "data-id": task.id, class: task.done ? "done" : "" },
    el("button", { type: "button", class: "check square", "aria-pressed": String(task.done),
      "aria-label": `${task.done ? "Reopen" : "Complete"} ${task.title}`, onclick: () => toggleTask(task) }),
    el("div", { class: "grow" }, el("span", { class: "name", text: task.title }), meta.childNodes.length ? meta : null),
    el("button", { type: "button", class: "row-button", "aria-label": `Delete ${task.title}`, text: "✕",
      onclick: () => deleteTask(task) }));
  return li;
}
function renderTasks() {
  const active = state.tasks.filter((t) => !t.done);
  const done = state.tasks.filter((t) => t.done);
  $("task-list").replaceChildren(...active.map(taskRow));
  $("task-list").hidden = active.length === 0;
  $("done-list").replaceChildren(...done.map(taskRow));
  $("done-title").hidden = done.length === 0;
  $("done-list").hidden = done.length === 0;
  $("tasks-empty").hidden = state.tasks.length > 0;
  $("focus-count").textContent = `(${active.length} of 3 active)`;
}
let refusedTask = null;
async function addTask(force = false) {
  const title = $("task-title").value.trim();
  if (!title) return;
  const params = { title, force };
  if ($("task-assignee").value) params.assignee = $("task-assignee").value;
  if ($("task-due").value) params.due = $("task-due").value;
  try {
    await call("task.add", params);
    $("task-form").reset(); $("focus-refusal").hidden = true; refusedTask = null;
  } catch (error) {
    if (/focus/i.test(error.message)) { showRefusal(error.message, () => addTask(true)); } else fail(error);
  }
  refresh("tasks");
}
function showRefusal(message, force) {
  refusedTask = force;
  // The household's sentence, without the command line's way around it (the button is that here).
  $("focus-refusal-text").textContent = message.replace(/,? or pass --force\.?$/, ".");
  $("focus-refusal").hidden = false;
  $("task-force").focus();
}
async function toggleTask(task) {
  task.done = !task.done; renderTasks();
  try {
    await call(task.done ? "task.done" : "task.reopen", { task: task.id });
  } catch (error) {
    task.done = !task.done; renderTasks();
    if (/focus/i.test(error.message)) showRefusal(error.message, async () => {
      try { await call("task.reopen", { task: task.id, force: true }); } catch (e) { fail(e); }
      refresh("tasks");
    }); else fail(error);
  }
  refresh("tasks");
}
async function deleteTask(task) {
  state.tasks = state.tasks.filter((t) => t.id !== task.id); renderTasks();
  try { await call("task.delete", { task: task.id }); toast(`Deleted “${task.title}”`); } catch (error) { fail(error); }
  refresh("tasks");
}

// ---------- Backlog ----------
function renderBacklog() {
  const categories = state.backlog;
  $("backlog-empty").hidden = categories.length > 0;
  $("backlog-list").replaceChildren(...categories.map((category) => {
    const input = el("input", { placeholder: "Add item", maxlength: "200", "aria-label": `New item in ${category.title}` });
    const form = el("form", { class: "form-row", autocomplete: "off" }, input, el("button", { type: "submit", text: "Add" }));
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
        el("button", { type: "button", class: "row-button", text: "→ Task", "aria-label": `Make “${item.title}” a task`,
          onclick: () => promote(item) }),
        el("button", { type: "button", class: "row-button", text: "✕", "aria-label": `Remove ${item.title}`,
          onclick: () => removeBacklogItem(item) })))) : el("p", { class: "muted", text: "No items yet." }),
      form);
  }));
}
async function promote(item) {
  try { await call("backlog.promote", { item: item.id }); toast(`“${item.title}” is a task now`); }
  catch (error) {
    if (/focus/i.test(error.message)) { switchTab("tasks"); showRefusal(error.message, async () => {
      try { await call("backlog.promote", { item: item.id, force: true }); } catch (e) { fail(e); }
      refresh("backlog", "tasks");
    }); } else fail(error);
  }
  refresh("backlog", "tasks");
}
async function removeBacklogItem(item) {
  try { await call("backlog.remove", { item: item.id }); } catch (error) { fail(error); }
  refresh("backlog");
}

// ---------- More ----------
function renderMore() {
  if (!state.household) return;
  const input = $("household-input");
  if (document.activeElement !== input) input.value = state.household.name;
  $("member-list").replaceChildren(...state.members.map((m) => el("li", { "data-id": m.id },
    el("span", { class: "avatar", style: null, "aria-hidden": "true", text: m.initials }),
    el("span", { class: "grow", text: m.name + (m.isThisMachine ? " (this computer)" : "") }),
    el("button", { type: "button", class: "row-button", text: "✕", "aria-label": `Remove ${m.name}`, onclick: () => removeMember(m) }))));
  // Colours are set through the CSSOM (allowed by the CSP, unlike inline style attributes).
  $("member-list").querySelectorAll(".avatar").forEach((node, i) => { node.style.background = initialsColor(state.members[i]); });
  const s = state.settings;
  $("setting-celebrations").checked = !!s.celebrations;
  $("setting-suggestions").checked = !!s.suggestions;
  renderMachines();
}
function renderCategories() {
  $("category-list").replaceChildren(...state.backlog.map((c) => el("li", { "data-id": c.id },
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
  $("recurring-list").replaceChildren(...state.recurring.map((r) => el("li", { "data-id": r.id },
    el("span", { class: "grow", text: r.title }), el("span", { class: "muted", text: r.schedule }),
    el("button", { type: "button", class: "row-button", text: "✕", "aria-label": `Stop repeating ${r.title}`,
      onclick: async () => { try { await call("recurring.remove", { template: r.id }); } catch (e) { fail(e); } refresh("recurring"); } }))));
  $("recurring-empty").hidden = state.recurring.length > 0;
}
function renderMachines() {
  const status = state.status;
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

// ---------- Kids ----------
function renderKids() {
  $("kids-empty").hidden = state.kids.length > 0;
  for (const id of ["kid-picker", "kid-views", "kid-cards"]) $(id).hidden = state.kids.length === 0;
  $("kid-picker").replaceChildren(...state.kids.map((k) => el("button", { type: "button", "aria-pressed": String(k.id === state.kid),
    text: k.name, onclick: () => { state.kid = k.id; refresh("kids"); } })));
  const kid = state.kids.find((k) => k.id === state.kid);
  $("kid-balance").textContent = kid ? `🥜 ${kid.balance} peanut${kid.balance === 1 ? "" : "s"}` : "";
  document.querySelectorAll("#kid-views button").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.view === state.kidView)));
  const cards = [];
  let empty = "";
  const day = todayISO();
  if (kid && state.kidView === "earn") {
    const earnedToday = new Set(state.ledger.filter((l) => l.day === day && l.outcome === "counted" && l.kind === "earn").map((l) => l.item));
    const items = state.catalogue.filter((i) => i.selected && i.kind !== "reward");
    for (const item of items) {
      const done = earnedToday.has(item.id);
      cards.push(el("button", { type: "button", class: `kid-card ${item.category}`, "aria-disabled": String(done),
        "aria-label": `${item.title}, ${item.peanuts} peanuts${done ? ", done today" : ""}`,
        onclick: () => { if (!done) kidDone(kid, item); } },
        item.title, el("span", { class: "peanuts", text: `🥜 ${item.peanuts}${done ? " · done today" : ""}` })));
    }
    empty = "No family rules or chores yet. A parent picks them from the catalogue (pulse-peer kids select).";
  } else if (kid && state.kidView === "rewards") {
    for (const item of state.catalogue.filter((i) => i.selected && i.kind === "reward")) {
      cards.push(el("button", { type: "button", class: `kid-card ${item.category}`,
        "aria-label": `${item.title}, costs ${item.peanuts} peanuts`, onclick: () => redeem(kid, item) },
        item.title, el("span", { class: "peanuts", text: `🥜 ${item.peanuts}` })));
    }
    empty = "No rewards yet. A parent picks them from the catalogue.";
  } else if (kid && state.kidView === "basket") {
    for (const line of state.basket) {
      cards.push(el("div", { class: "kid-card fun" }, line.title,
        el("button", { type: "button", class: "row-button", text: "Remove", "aria-label": `Remove ${line.title} from the basket (no refund)`,
          onclick: () => basketRemove(kid, line) })));
    }
    empty = "The basket is empty: rewards bought with peanuts land here.";
  } else if (kid && state.kidView === "history") {
    for (const line of [...state.ledger].reverse()) {
      const sign = line.peanuts > 0 ? "+" : "";
      cards.push(el("div", { class: "kid-card fun" }, line.title,
        el("span", { class: "peanuts", text: `${line.outcome === "counted" ? `${sign}${line.peanuts}` : "declined"} · ${line.day || ""} · balance ${line.balanceAfter}` })));
    }
    empty = "Nothing earned or spent yet.";
  }
  $("kid-cards").replaceChildren(...cards);
  $("kid-cards-empty").hidden = !kid || cards.length > 0;
  $("kid-cards-empty").textContent = empty;
}
async function kidDone(kid, item) {
  try { await call("kids.done", { kid: kid.id, item: item.id }); toast(`Great job! +${item.peanuts} 🥜`, { seconds: 2 }); } catch (error) { fail(error); }
  refresh("kids");
}
async function redeem(kid, item) {
  try { await call("kids.redeem", { kid: kid.id, reward: item.id }); toast("Enjoy your reward!", { seconds: 2 }); } catch (error) { fail(error); }
  refresh("kids");
}
async function basketRemove(kid, line) {
  try { await call("kids.basket.remove", { kid: kid.id, entry: line.id }); } catch (error) { fail(error); }
  refresh("kids");
}

// ---------- tabs ----------
const tabs = ["shopping", "tasks", "backlog", "kids", "more"];
function switchTab(tab, focus = false) {
  if (!tabs.includes(tab)) tab = "shopping";
  state.tab = tab;
  for (const name of tabs) {
    const button = $(`t-${name}`);
    const selected = name === tab;
    button.setAttribute("aria-selected", String(selected));
    button.tabIndex = selected ? 0 : -1;
    $(`tab-${name}`).hidden = !selected;
  }
  if (focus) $(`t-${tab}`).focus();
  if (location.hash !== `#${tab}`) history.replaceState(null, "", `#${tab}`);
  renderNewItems();
}

// ---------- wiring ----------
function wire() {
  for (const name of tabs) $(`t-${name}`).addEventListener("click", () => switchTab(name));
  document.querySelector(".tabbar").addEventListener("keydown", (e) => {
    const i = tabs.indexOf(state.tab);
    if (e.key === "ArrowRight") switchTab(tabs[(i + 1) % tabs.length], true);
    else if (e.key === "ArrowLeft") switchTab(tabs[(i + tabs.length - 1) % tabs.length], true);
    else if (e.key === "Home") switchTab(tabs[0], true);
    else if (e.key === "End") switchTab(tabs[tabs.length - 1], true);
  });
  $("add-item").addEventListener("click", startRapid);
  $("clear-all").addEventListener("click", clearAll);
  $("restock-toggle").addEventListener("click", () => {
    const sheet = $("restock-sheet");
    sheet.hidden = !sheet.hidden;
    $("restock-toggle").setAttribute("aria-expanded", String(!sheet.hidden));
  });
  $("new-items").addEventListener("click", () => {
    const rows = state.newItems.map((id) => $("shop-list").querySelector(`li[data-id="${CSS.escape(id)}"]`)).filter(Boolean);
    rows[0]?.scrollIntoView({ behavior: "smooth", block: "center" });
    rows.forEach((row) => { row.classList.remove("highlight"); void row.offsetWidth; row.classList.add("highlight"); });
    state.newItems = []; state.newCount = 0; renderNewItems();
  });
  $("task-form").addEventListener("submit", (e) => { e.preventDefault(); addTask(false); });
  $("task-force").addEventListener("click", async () => { $("focus-refusal").hidden = true; if (refusedTask) await refusedTask(); });
  $("task-refusal-close").addEventListener("click", () => { $("focus-refusal").hidden = true; });
  $("goto-categories").addEventListener("click", () => { switchTab("more"); $("category-name").focus(); });
  $("household-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try { await call("household.rename", { name: $("household-input").value }); } catch (error) { fail(error); }
    refresh("household");
  });
  $("member-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const name = $("member-name").value.trim(); if (!name) return;
    try { await call("member.add", { name }); $("member-name").value = ""; } catch (error) { fail(error); }
    refresh("household");
  });
  $("category-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const title = $("category-name").value.trim(); if (!title) return;
    try { await call("backlog.category.add", { title }); $("category-name").value = ""; } catch (error) { fail(error); }
    refresh("backlog");
  });
  $("recurring-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const title = $("recurring-title-input").value.trim(); if (!title) return;
    try { await call("recurring.add", { title, schedule: $("recurring-schedule").value }); $("recurring-title-input").value = ""; }
    catch (error) { fail(error); }
    refresh("recurring", "tasks");
  });
  for (const radio of document.querySelectorAll('input[name="appearance"]')) {
    radio.addEventListener("change", () => { applyAppearance(radio.value); setSetting("appearance", radio.value); });
  }
  $("setting-celebrations").addEventListener("change", (e) => setSetting("celebrations", String(e.target.checked)));
  $("setting-suggestions").addEventListener("change", (e) => setSetting("suggestions", String(e.target.checked)));
  document.querySelectorAll("#kid-views button").forEach((b) => b.addEventListener("click", () => { state.kidView = b.dataset.view; renderKids(); }));
  $("sign-out").addEventListener("click", async () => {
    try { await request("/api/logout", { method: "POST", headers: { "X-Pulse-CSRF": state.csrf } }); } catch (error) { /* signed out anyway */ }
    signedOut();
  });
  window.addEventListener("hashchange", () => switchTab(location.hash.slice(1)));
}

async function start() {
  try {
    const session = await request("/api/session");
    state.csrf = session.csrf;
  } catch (error) {
    if (!$("signed-out").hidden) return;
    setOnline(false);
    setTimeout(start, 2000);
    return;
  }
  switchTab(location.hash.slice(1) || "shopping");
  await loadAll().catch(fail);
  connectEvents();
  document.body.dataset.ready = "true";
}
let started = false;
document.addEventListener("DOMContentLoaded", () => { if (!started) { started = true; wire(); start(); } });
