// The Kids tab: a kid's rules and chores to earn peanuts, rewards to spend them on, the
// basket and the history. Whether an item was done today is the agent's answer
// (`kids.catalogue.list` with the kid: `doneToday`), not worked out here.
import { call } from "./api.js";
import { $, $$, el, toast, fail, t, titleOf, formatDay, formatTime, formatMoment, language } from "./ui.js";
import { register, store, refresh, local } from "./page.js";
import { celebrationsOn, greatJob, confetti } from "./celebrate.js";
import { renderGoal } from "./goals.js";
import { renderKidReports, reportChore } from "./approval.js";

local.kid = null;
local.kidView = "earn";

register({
  id: "kids",
  tab: true,
  topics: ["kid.", "kid", "catalogue_selection", "ledger_entry", "savings_goal", "chore_report", "settings"],
  async load() {
    await store.load("kids", async () => {
      // The reports of every kid (parents' mode lists those that wait) and the household's
      // setting, asked beside the kids (they do not depend on which kid is shown).
      const besides = Promise.all([call("kids.reports.list"), call("settings.get")]);
      besides.catch(() => {}); // answered below, after the kids' own answer
      const kids = await call("kids.list");
      if (!kids.some((k) => k.id === local.kid)) local.kid = kids.length ? kids[0].id : null;
      // Parents' mode needs the catalogue even before there is a kid.
      const [[catalogue, ledger, basket], [reports, settings]] = await Promise.all([
        local.kid ? Promise.all([
          call("kids.catalogue.list", { kid: local.kid }).catch(() => []),
          call("kids.history.list", { kid: local.kid }), call("kids.basket.list", { kid: local.kid })])
          : call("kids.catalogue.list").then((all) => [all, [], []]),
        besides]);
      return { kids, catalogue, ledger, basket, reports, approval: settings.kidsApproval === true };
    });
  },
  render,
  wire() {
    $$("#kid-views button").forEach((b) => b.addEventListener("click", () => { local.kidView = b.dataset.view; render(); }));
  },
});

// Every adult is told when the parents' PIN changed (on phones too), until one says it was
// theirs with the PIN (parents.js answers on a computer). The agent says what and where.
register({
  id: "pin",
  topics: ["kid.pin"],
  async load() { await store.load("pin", () => call("kids.pin.get")); },
  render: renderPINNotice,
});

function renderPINNotice() {
  const change = store.view("pin")?.change;
  $("pin-notice").hidden = !change;
  if (!change) return;
  $("pin-notice-text").textContent = t("page.pin.notice", {
    what: change.kind, machine: change.machine || "?", by: change.by || "", date: formatMoment(change.time) });
}

/** A rule's or chore's card by its state: its label, and the words under its title. */
const cardWords = {
  "": ["page.kids.earn.label", "page.kids.peanuts"],
  done: ["page.kids.earn.label_done", "page.kids.peanuts_done"],
  ask: ["page.kids.earn.label_ask", "page.kids.peanuts_ask"],
  waiting: ["page.kids.earn.label_waiting", "page.kids.peanuts_waiting"],
  other: ["page.kids.earn.label_other", "page.kids.peanuts_other"],
};

function render() {
  const { kids = [], catalogue = [], ledger = [], basket = [], reports = [] } = store.view("kids") || {};
  $("kids-empty").hidden = kids.length > 0;
  for (const id of ["kid-picker", "kid-views", "kid-cards"]) $(id).hidden = kids.length === 0;
  $("kid-picker").replaceChildren(...kids.map((k) => el("button", { type: "button", "aria-pressed": String(k.id === local.kid),
    text: k.name, onclick: () => { local.kid = k.id; refresh("kids"); } })));
  const kid = kids.find((k) => k.id === local.kid);
  $("kid-balance").textContent = kid ? t("page.kids.balance", { balance: kid.balance }) : "";
  renderGoal(kid, catalogue);
  renderKidReports(local.kidView === "earn" ? kid : null, reports);
  $$("#kid-views button").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.view === local.kidView)));
  const cards = [];
  let empty = "";
  if (kid && local.kidView === "earn") {
    for (const item of catalogue.filter((i) => i.selected && i.kind !== "reward")) {
      const done = item.doneToday === true;
      // A chore that waits for a parent is reported, and shows as waiting until one decides.
      const ask = item.approval === true;
      const waiting = ask && item.waiting === true;
      // A chore taking turns among kids, on another kid's day (the agent's `yourTurn`).
      const other = item.yourTurn === false;
      const state = done ? "done" : other ? "other" : waiting ? "waiting" : ask ? "ask" : "";
      const words = { title: titleOf(item), peanuts: item.peanuts, kid: item.turns?.[0]?.kid || "" };
      cards.push(el("button", { type: "button", class: `kid-card ${item.category}`, "data-id": item.id, "aria-disabled": String(done || waiting || other),
        "data-state": state,
        "aria-label": t(cardWords[state][0], words),
        onclick: () => { if (done || waiting || other) return; if (ask) reportChore(kid, item); else kidDone(kid, item); } },
        titleOf(item), el("span", { class: "peanuts", text: t(cardWords[state][1], words) })));
    }
    empty = t("page.kids.earn.empty.parents");
  } else if (kid && local.kidView === "rewards") {
    for (const item of catalogue.filter((i) => i.selected && i.kind === "reward")) {
      cards.push(el("button", { type: "button", class: `kid-card ${item.category}`, "data-id": item.id,
        "aria-label": t("page.kids.reward.label", { title: titleOf(item), peanuts: item.peanuts }), onclick: () => redeem(kid, item) },
        titleOf(item), el("span", { class: "peanuts", text: t("page.kids.peanuts", { peanuts: item.peanuts }) })));
    }
    empty = t("page.kids.rewards.empty");
  } else if (kid && local.kidView === "basket") {
    for (const line of basket) {
      cards.push(el("div", { class: "kid-card fun" }, titleOf(line),
        el("button", { type: "button", class: "row-button", text: t("page.kids.basket.remove"),
          "aria-label": t("page.kids.basket.remove_label", { title: titleOf(line) }), onclick: () => basketRemove(kid, line) })));
    }
    empty = t("page.kids.basket.empty");
  } else if (kid && local.kidView === "history") {
    const signed = new Intl.NumberFormat(language(), { signDisplay: "exceptZero" });
    for (const line of [...ledger].reverse()) {
      const params = { change: signed.format(line.kind === "spend" ? -line.peanuts : line.peanuts), day: line.day ? formatDay(line.day) : line.time ? formatTime(line.time) : "", balance: line.balanceAfter };
      const said = t(line.outcome === "counted" ? "page.kids.history.counted" : "page.kids.history.declined", params);
      // A bonus says what it rewards, in the reader's words.
      const title = line.bonusFor ? t("page.kids.history.bonus", { title: titleOf({ title: line.bonusTitle, titleKey: line.bonusTitleKey }) }) : titleOf(line);
      cards.push(el("div", { class: "kid-card fun" }, title, el("span", { class: "peanuts",
        // An adjustment or a bonus says which adult made it (a kid's own lines are the kid's).
        text: line.by && (line.reason != null || line.bonusFor)
          ? `${said} · ${line.machine ? t("page.kids.history.by_on", { name: line.by, machine: line.machine }) : t("page.kids.history.by", { name: line.by })}`
          : said })));
    }
    empty = t("page.kids.history.empty");
  }
  $("kid-cards").replaceChildren(...cards);
  $("kid-cards-empty").hidden = !kid || cards.length > 0;
  $("kid-cards-empty").textContent = empty;
}

// With Celebrations on, the seeds' moments (celebrate.js); off, a plain line says what happened.
async function kidDone(kid, item) {
  try {
    await call("kids.done", { kid: kid.id, item: item.id });
    if (celebrationsOn()) greatJob(t("page.kids.earned", { peanuts: item.peanuts }));
    else toast(t("page.kids.earned_quiet", { name: kid.name, peanuts: item.peanuts }), { seconds: 3 });
  } catch (error) { fail(error); }
  refresh("kids");
}
async function redeem(kid, item) {
  try {
    await call("kids.redeem", { kid: kid.id, reward: item.id });
    if (celebrationsOn()) confetti();
    else toast(t("page.kids.redeemed_quiet", { name: kid.name, title: titleOf(item) }), { seconds: 3 });
  } catch (error) { fail(error); }
  refresh("kids");
}
async function basketRemove(kid, line) {
  try { await call("kids.basket.remove", { kid: kid.id, entry: line.id }); } catch (error) { fail(error); }
  refresh("kids");
}
