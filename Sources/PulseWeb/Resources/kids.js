// The Kids tab: a kid's rules and chores to earn peanuts, rewards to spend them on, the
// basket and the history. Whether an item was done today is the agent's answer
// (`kids.catalogue.list` with the kid: `doneToday`), not worked out here.
import { call } from "./api.js";
import { $, el, toast, fail } from "./ui.js";
import { register, store, refresh, local } from "./page.js";

local.kid = null;
local.kidView = "earn";

register({
  id: "kids",
  tab: true,
  topics: ["kid.", "kid", "catalogue_selection", "ledger_entry"],
  async load() {
    const kids = await call("kids.list");
    if (!kids.some((k) => k.id === local.kid)) local.kid = kids.length ? kids[0].id : null;
    if (!local.kid) { store.set("kids", { kids, catalogue: [], ledger: [], basket: [] }); return; }
    const [catalogue, ledger, basket] = await Promise.all([
      call("kids.catalogue.list", { kid: local.kid }).catch(() => []),
      call("kids.history.list", { kid: local.kid }), call("kids.basket.list", { kid: local.kid })]);
    store.set("kids", { kids, catalogue, ledger, basket });
  },
  render,
  wire() {
    document.querySelectorAll("#kid-views button").forEach((b) => b.addEventListener("click", () => { local.kidView = b.dataset.view; render(); }));
  },
});

function render() {
  const { kids = [], catalogue = [], ledger = [], basket = [] } = store.view("kids") || {};
  $("kids-empty").hidden = kids.length > 0;
  for (const id of ["kid-picker", "kid-views", "kid-cards"]) $(id).hidden = kids.length === 0;
  $("kid-picker").replaceChildren(...kids.map((k) => el("button", { type: "button", "aria-pressed": String(k.id === local.kid),
    text: k.name, onclick: () => { local.kid = k.id; refresh("kids"); } })));
  const kid = kids.find((k) => k.id === local.kid);
  $("kid-balance").textContent = kid ? `🥜 ${kid.balance} peanut${kid.balance === 1 ? "" : "s"}` : "";
  document.querySelectorAll("#kid-views button").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.view === local.kidView)));
  const cards = [];
  let empty = "";
  if (kid && local.kidView === "earn") {
    for (const item of catalogue.filter((i) => i.selected && i.kind !== "reward")) {
      const done = item.doneToday === true;
      cards.push(el("button", { type: "button", class: `kid-card ${item.category}`, "aria-disabled": String(done),
        "aria-label": `${item.title}, ${item.peanuts} peanuts${done ? ", done today" : ""}`,
        onclick: () => { if (!done) kidDone(kid, item); } },
        item.title, el("span", { class: "peanuts", text: `🥜 ${item.peanuts}${done ? " · done today" : ""}` })));
    }
    empty = "No family rules or chores yet. A parent picks them from the catalogue (pulse-peer kids select).";
  } else if (kid && local.kidView === "rewards") {
    for (const item of catalogue.filter((i) => i.selected && i.kind === "reward")) {
      cards.push(el("button", { type: "button", class: `kid-card ${item.category}`,
        "aria-label": `${item.title}, costs ${item.peanuts} peanuts`, onclick: () => redeem(kid, item) },
        item.title, el("span", { class: "peanuts", text: `🥜 ${item.peanuts}` })));
    }
    empty = "No rewards yet. A parent picks them from the catalogue.";
  } else if (kid && local.kidView === "basket") {
    for (const line of basket) {
      cards.push(el("div", { class: "kid-card fun" }, line.title,
        el("button", { type: "button", class: "row-button", text: "Remove", "aria-label": `Remove ${line.title} from the basket (no refund)`,
          onclick: () => basketRemove(kid, line) })));
    }
    empty = "The basket is empty: rewards bought with peanuts land here.";
  } else if (kid && local.kidView === "history") {
    for (const line of [...ledger].reverse()) {
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
