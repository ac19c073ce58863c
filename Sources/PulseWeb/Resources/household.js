// The household (name, members, settings, the rules' limits) and the agent's status:
// the header, and what the other parts show of them.
import { call, status } from "./api.js";
import { $, applyAppearance, t } from "./ui.js";
import { register, store } from "./page.js";

register({
  id: "household",
  topics: ["member", "setting", "household"],
  async load() {
    if (await store.load("household", () => call("household.get"))) applyAppearance(store.agent("household").settings.appearance);
  },
  render: renderHeader,
});

register({
  id: "status",
  topics: ["peer.", "conflict"],
  async load() { await store.load("status", status); },
  render: renderHeader,
});

// The program's name: the same in every language, so not in the catalogue.
const productName = "House Pulse";

/** This machine's member, or null. */
export function me() { return store.view("household")?.members.find((m) => m.isThisMachine) || null; }
export function members() { return store.view("household")?.members || []; }

function renderHeader() {
  const household = store.view("household");
  if (household) {
    $("household-name").textContent = household.name;
    document.title = t("page.title.household", { household: household.name, product: productName });
  }
  const current = store.view("status");
  if (!current) return;
  const connected = current.peers.filter((p) => p.state === "connected");
  const state = current.peers.some((p) => p.problem) ? "problem" : connected.every((p) => p.inSync) ? "synced" : "syncing";
  $("sync-state").textContent = connected.length
    ? t("page.sync.connected", { count: connected.length, state })
    : t(current.peers.length ? "page.sync.unreachable" : "page.sync.alone");
}
