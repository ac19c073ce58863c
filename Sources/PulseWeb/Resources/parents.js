// Parents' mode of the Kids tab, behind the household's PIN (Mindful Home's Admin): the
// keypad with four dots; then kids added, renamed, removed, the catalogue as a full-screen
// modal (three categories of six per kind, ＋ / 🗑), the family's own items, adjustments,
// a new PIN. The PIN is kept in this page's memory only, sent with each adult action (the
// agent checks it every time, rate-limited as on the CLI) and forgotten after 3 idle
// minutes, on Lock, on sign-out and when the page goes away.
import { call } from "./api.js";
import { $, $$, el, t, titleOf, fail, describe, toast, confirmDialog, editInPlace } from "./ui.js";
import { register, store, refresh, local } from "./page.js";
import { celebrationsOn, confetti } from "./celebrate.js";
import { renderApprovals } from "./approval.js";
import { renderKidTurns } from "./kidturns.js";

const idleMinutes = 3;
let pin = null;
let idleTimer = null;

register({
  id: "parents",
  computerOnly: true,
  topics: [],
  reads: ["kids"],
  async load() {},
  render,
  wire,
});

// ---- The keypad ----

/** Asks for four digits on the keypad; resolves with them, or null when cancelled.
 * `check(digits)` may answer an error message: the dots clear and the pad stays open. */
function askPIN(title, check = async (_digits) => null) {
  const dialog = $("pin-pad");
  let digits = "";
  $("pin-title").textContent = title;
  $("pin-error").textContent = "";
  const draw = () => {
    $("pin-dots").querySelectorAll("span").forEach((dot, i) => dot.classList.toggle("filled", i < digits.length));
    $("pin-entered").textContent = t("page.pin.entered", { count: digits.length });
  };
  draw();
  return new Promise((resolve) => {
    let busy = false;
    const finish = (answer) => {
      dialog.removeEventListener("keydown", onKey);
      dialog.oncancel = null;
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const press = async (digit) => {
      if (busy || digits.length >= 4) return;
      digits += digit;
      draw();
      if (digits.length < 4) return;
      busy = true;
      const problem = await check(digits);
      busy = false;
      if (problem) { $("pin-error").textContent = problem; digits = ""; draw(); return; }
      finish(digits);
    };
    const back = () => { if (!busy) { digits = digits.slice(0, -1); draw(); } };
    const onKey = (e) => {
      if (/^[0-9]$/.test(e.key)) { e.preventDefault(); press(e.key); } else if (e.key === "Backspace") { e.preventDefault(); back(); }
    };
    dialog.querySelectorAll("[data-digit]").forEach((b) => { b.onclick = () => press(b.dataset.digit); });
    $("pin-back").onclick = back;
    $("pin-cancel").onclick = () => finish(null);
    // Escape cancels (the `cancel` event comes at once; `close` would come after the next pad opened).
    dialog.oncancel = (e) => { e.preventDefault(); finish(null); };
    dialog.addEventListener("keydown", onKey);
    dialog.showModal();
    dialog.querySelector('[data-digit="1"]').focus();
  });
}

/** A new PIN typed twice; null when cancelled. */
async function askNewPIN(title) {
  for (;;) {
    const first = await askPIN(title);
    if (first === null) return null;
    let mismatch = false;
    const second = await askPIN(t("page.pin.repeat"), async (digits) => (digits === first ? null : (mismatch = true, t("page.pin.mismatch"))));
    if (second !== null) return second;
    if (!mismatch) return null;
  }
}

// ---- Locking ----

function unlock(digits) {
  pin = digits;
  touch();
  render();
  // The keypad gave the focus back to 🔒 Parents, hidden now: parents' mode takes it (its title).
  $("parents-title").focus();
}

export function lock() {
  pin = null;
  clearTimeout(idleTimer);
  closeCatalogue();
  render();
}

function touch() {
  if (pin === null) return;
  clearTimeout(idleTimer);
  idleTimer = setTimeout(lock, idleMinutes * 60_000);
}

async function openParents() {
  let state;
  try { state = await call("kids.pin.get"); } catch (error) { fail(error); return; }
  if (!state.set) {
    if (!state.canSet) { toast(t("refusal.not_synced_yet"), { error: true, seconds: 8 }); return; }
    const chosen = await askNewPIN(t("page.pin.choose"));
    if (chosen === null) return;
    try { await call("kids.pin.set", { pin: chosen }); } catch (error) { fail(error); return; }
    toast(t("page.pin.set"));
    unlock(chosen);
    return;
  }
  $("pin-forgot-pad").hidden = false; // only while asking for the PIN to open parents' mode
  const digits = await askPIN(t("page.pin.enter"), async (entered) => {
    try { await call("kids.pin.check", { pin: entered }); return null; } catch (error) { return describe(error); }
  });
  $("pin-forgot-pad").hidden = true;
  if (digits !== null) unlock(digits);
}

// ---- The PIN changed: a parent says it was theirs; a forgotten one is reset from two computers ----

async function acknowledgeChange() {
  const digits = await askPIN(t("page.pin.notice.confirm"), async (entered) => {
    try { await call("kids.pin.acknowledge", { pin: entered }); return null; } catch (error) { return describe(error); }
  });
  if (digits !== null) refresh("pin");
}

function forgotPIN() {
  const dialog = $("pin-reset");
  if ($("pin-pad").open) $("pin-cancel").click();
  $("pin-reset-code").hidden = true;
  $("pin-reset-error").textContent = "";
  $("pin-reset-input").value = "";
  dialog.showModal();
}

async function askResetCode() {
  $("pin-reset-error").textContent = "";
  try {
    const code = await call("kids.pin.reset");
    $("pin-reset-code").textContent = `${code.slice(0, 3)} ${code.slice(3)}`;
    $("pin-reset-code").hidden = false;
  } catch (error) { $("pin-reset-error").textContent = describe(error); }
}

async function confirmReset(e) {
  e.preventDefault();
  $("pin-reset-error").textContent = "";
  const code = $("pin-reset-input").value.replace(/\D/g, "");
  try {
    await call("kids.pin.confirmReset", { code });
  } catch (error) { $("pin-reset-error").textContent = describe(error); return; }
  $("pin-reset").close();
  toast(t("page.pin.reset.done"), { seconds: 8 });
  refresh("pin");
  openParents(); // no PIN now: choose the new one
}

/** An adult action with the PIN; a PIN the agent no longer takes locks parents' mode. */
async function adult(method, params = {}) {
  touch();
  try {
    return await call(method, { ...params, pin });
  } catch (error) {
    if (["wrong_pin", "pin_required", "pin_not_set", "pin_locked"].includes(error.code)) lock();
    throw error;
  }
}

// ---- The panel ----

function render() {
  const open = pin !== null;
  $("parents-panel").hidden = !open;
  $("parents-open").hidden = open;
  $("parents-lock").hidden = !open;
  document.body.classList.toggle("parents-mode", open);
  if (!open) return;
  const { kids = [] } = store.view("kids") || {};
  $("parents-kids").replaceChildren(...kids.map(kidRow));
  const select = $("adjust-kid");
  const chosen = select.value;
  select.replaceChildren(...kids.map((k) => el("option", { value: k.id, text: k.name })));
  if (kids.some((k) => k.id === chosen)) select.value = chosen; else if (local.kid) select.value = local.kid;
  $("adjust-form").hidden = kids.length === 0;
  renderBonuses();
  const { reports = [], approval = false } = store.view("kids") || {};
  renderApprovals(reports, approval, adult);
  renderKidTurns(store.view("kids") || {}, adult);
  renderOwnCategories();
  if ($("catalogue-modal").open) renderCatalogue();
}

function kidRow(kid) {
  const name = el("span", { class: "grow name", text: kid.name });
  const li = el("li", { "data-id": kid.id }, name,
    el("span", { class: "muted", text: t("page.kids.balance", { balance: kid.balance }) }),
    el("button", { type: "button", class: "row-button rename", text: t("page.parents.kid.rename"),
      "aria-label": t("page.parents.kid.rename_label", { name: kid.name }), onclick: () => renameKid(kid, name) }),
    el("button", { type: "button", class: "row-button remove", text: "✕", "aria-label": t("page.parents.kid.remove_label", { name: kid.name }),
      onclick: () => removeKid(kid) }));
  return li;
}

function renameKid(kid, name) {
  editInPlace(name, {
    value: kid.name, maxlength: 60, label: t("page.parents.kid.rename_label", { name: kid.name }),
    save: (text) => adult("kids.rename", { kid: kid.id, name: text }),
    done: () => { refresh("kids"); render(); },
  });
}

async function removeKid(kid) {
  if (!(await confirmDialog(t("page.parents.kid.remove_title", { name: kid.name }), t("page.parents.kid.remove_text", { name: kid.name }),
    t("page.parents.kid.remove_ok")))) return;
  try { await adult("kids.remove", { kid: kid.id }); } catch (error) { fail(error); }
  refresh("kids");
}

// ---- The catalogue modal ----

let catalogueKind = "rule";
const catalogueTitles = { rule: "page.catalogue.title.rule", chore: "page.catalogue.title.chore", reward: "page.catalogue.title.reward" };
const categories = ["security", "respect", "fun"];

function openCatalogue(kind) {
  catalogueKind = kind;
  renderCatalogue();
  $("catalogue-modal").showModal();
}
function closeCatalogue() { if ($("catalogue-modal").open) $("catalogue-modal").close(); }

function renderCatalogue() {
  const { catalogue = [] } = store.view("kids") || {};
  $("catalogue-title").textContent = t(catalogueTitles[catalogueKind]);
  $("catalogue-kinds").querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.kind === catalogueKind)));
  const items = catalogue.filter((item) => item.kind === catalogueKind);
  $("catalogue-sections").replaceChildren(...categories.map((category) => {
    const rows = items.filter((item) => item.category === category);
    return el("section", { class: "cat-section", "aria-label": categoryName(category, catalogueKind) },
      el("h4", { text: categoryName(category, catalogueKind) }),
      ...rows.map((item) => el("div", { class: `cat-row ${category}${item.selected ? " selected" : ""}`, "data-id": item.id },
        el("span", { class: "grow", text: titleOf(item) }),
        el("span", { class: "peanuts", text: t("page.kids.peanuts", { peanuts: item.peanuts }) }),
        el("button", { type: "button", class: item.selected ? "deselect" : "select", text: item.selected ? "🗑" : "+",
          "aria-label": t(item.selected ? "page.catalogue.deselect" : "page.catalogue.select", { title: titleOf(item) }),
          onclick: () => choose(item) }))));
  }));
}

async function choose(item) {
  const method = item.selected ? "kids.deselect" : "kids.select";
  try {
    await store.guess("kids", (s) => ({ ...s, catalogue: s.catalogue.map((x) => (x.id === item.id ? { ...x, selected: !item.selected } : x)) }),
      () => adult(method, { items: [item.id] }));
  } catch (error) { fail(error); }
  refresh("kids");
}

// ---- Bonuses (issue 58): for what the kid shown did this week, once each ----

function renderBonuses() {
  const { kids = [], ledger = [] } = store.view("kids") || {};
  const kid = kids.find((k) => k.id === local.kid);
  // A goal reached: given in one step (the reward's spend and the goal's end).
  $("goal-give").hidden = !kid?.goal?.reached;
  if (kid?.goal?.reached) $("goal-redeem").textContent = t("page.parents.goal.redeem", { title: titleOf(kid.goal), kid: kid.name });
  $("bonus").hidden = !kid;
  if (!kid) return;
  $("bonus-hint").textContent = t("page.parents.bonus.hint", { kid: kid.name });
  const weekAgo = Date.now() - 7 * 86_400_000;
  const given = new Map(ledger.filter((line) => line.bonusFor && line.outcome === "counted").map((line) => [line.bonusFor, line]));
  const done = ledger.filter((line) => line.kind === "earn" && line.item && line.outcome === "counted" && Number(line.time || 0) >= weekAgo).reverse().slice(0, 10);
  $("bonus-list").replaceChildren(...done.map((line) => {
    const title = titleOf(line);
    const bonus = given.get(line.id);
    const give = async (peanuts) => {
      try {
        await adult("kids.bonus", { kid: kid.id, entry: line.id, peanuts });
        toast(t("page.parents.bonus.given", { peanuts }));
      } catch (error) { fail(error); }
      refresh("kids");
    };
    const other = el("input", { type: "number", min: "1", max: "100", step: "1", class: "short", "aria-label": t("page.parents.bonus.other", { title }) });
    return el("li", { "data-id": line.id }, el("span", { class: "grow", text: title }),
      ...(bonus ? [el("span", { class: "muted", text: t("page.parents.bonus.had", { peanuts: bonus.peanuts }) })]
        : [...[1, 2, 5].map((peanuts) => el("button", { type: "button", class: "plain bonus", text: t("page.parents.bonus.give", { peanuts }),
          "aria-label": t("page.parents.bonus.give_label", { peanuts, title }), onclick: () => give(peanuts) })),
        other, el("button", { type: "button", class: "plain", text: "✓", "aria-label": t("page.parents.bonus.other", { title }),
          onclick: () => { const peanuts = Number(other.value); if (other.value) give(Number.isInteger(peanuts) ? peanuts : 0); } })]));
  }));
  $("bonus-empty").hidden = done.length > 0;
}

// ---- Own items, adjustments, the PIN ----

// The categories by their names in the page's language (drawn with the panel: the words
// are loaded after the modules are wired).
function renderOwnCategories() {
  const select = $("own-category");
  const chosen = select.value || categories[0];
  select.replaceChildren(...categories.map((c) => el("option", { value: c, text: categoryName(c, $("own-kind").value) })));
  select.value = chosen;
}

/** A category's name for items of `kind`: rewards' have their own ("Treats", not "Security"). */
function categoryName(category, kind) {
  return t(kind === "reward" ? `catalogue.category.reward.${category}` : `catalogue.category.${category}`);
}

let peanuts = 1;
function setPeanuts(value) {
  peanuts = Math.min(20, Math.max(1, value));
  $("own-peanuts").textContent = String(peanuts);
  $("own-less").disabled = peanuts <= 1;
  $("own-more").disabled = peanuts >= 20;
}

async function changePIN() {
  touch();
  const fresh = await askNewPIN(t("page.pin.new"));
  if (fresh === null) return;
  try {
    await adult("kids.pin.change", { new: fresh });
    pin = fresh;
    toast(t("page.pin.changed"));
  } catch (error) { fail(error); }
}

function wire() {
  $("parents-open").addEventListener("click", openParents);
  $("parents-lock").addEventListener("click", () => { lock(); $("parents-open").focus(); });
  for (const kind of ["pointerdown", "keydown"]) document.addEventListener(kind, touch, { passive: true });
  window.addEventListener("pagehide", lock);
  $$(".catalogue-open").forEach((b) => b.addEventListener("click", () => openCatalogue(b.dataset.kind)));
  $("catalogue-kinds").querySelectorAll("button").forEach((b) => b.addEventListener("click", () => { catalogueKind = b.dataset.kind; renderCatalogue(); }));
  $("catalogue-close").addEventListener("click", closeCatalogue);
  setPeanuts(1);
  $("own-less").addEventListener("click", () => setPeanuts(peanuts - 1));
  $("own-more").addEventListener("click", () => setPeanuts(peanuts + 1));
  $("kid-add-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const name = $("kid-add-name").value.trim(); if (!name) return;
    try { const kid = await adult("kids.add", { name }); $("kid-add-name").value = ""; local.kid = local.kid || kid.id; } catch (error) { fail(error); }
    refresh("kids");
  });
  $("own-kind").addEventListener("change", renderOwnCategories);
  $("own-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const title = $("own-title").value.trim(); if (!title) return;
    try {
      await adult("kids.own", { kind: $("own-kind").value, title, peanuts, category: $("own-category").value });
      $("own-title").value = ""; setPeanuts(1);
      toast(t("page.parents.own.added", { title }));
    } catch (error) { fail(error); }
    refresh("kids");
  });
  $("adjust-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const amount = Number($("adjust-peanuts").value);
    const reason = $("adjust-reason").value.trim();
    if (!Number.isInteger(amount) || amount === 0) { toast(t("page.parents.adjust.whole"), { error: true }); return; }
    try {
      await adult("kids.adjust", { kid: $("adjust-kid").value, peanuts: amount, reason });
      $("adjust-peanuts").value = ""; $("adjust-reason").value = "";
      toast(t("page.parents.adjust.done", { peanuts: amount }));
    } catch (error) { fail(error); }
    refresh("kids");
  });
  $("goal-redeem").addEventListener("click", async () => {
    try {
      await adult("kids.goal.redeem", { kid: local.kid });
      if (celebrationsOn()) confetti();
    } catch (error) { fail(error); }
    refresh("kids");
  });
  $("pin-change").addEventListener("click", changePIN);
  $("pin-notice-ok").addEventListener("click", acknowledgeChange);
  for (const id of ["pin-forgot", "pin-forgot-pad"]) $(id).addEventListener("click", forgotPIN);
  $("pin-reset-ask").addEventListener("click", askResetCode);
  $("pin-reset-form").addEventListener("submit", confirmReset);
  $("pin-reset-close").addEventListener("click", () => $("pin-reset").close());
}
