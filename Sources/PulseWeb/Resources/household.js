// The household (name, members, settings, the rules' limits) and the agent's status:
// the header, and what the other parts show of them.
import { call, status } from "./api.js";
import { $, applyAppearance } from "./ui.js";
import { register, store } from "./page.js";

register({
  id: "household",
  topics: ["member", "setting", "household"],
  async load() {
    const household = await call("household.get");
    applyAppearance(household.settings.appearance);
    store.set("household", household);
  },
  render: renderHeader,
});

register({
  id: "status",
  topics: ["peer.", "conflict"],
  async load() { store.set("status", await status()); },
  render: renderHeader,
});

/** This machine's member, or null. */
export function me() { return store.view("household")?.members.find((m) => m.isThisMachine) || null; }
export function members() { return store.view("household")?.members || []; }

function renderHeader() {
  const household = store.view("household");
  if (household) { $("household-name").textContent = household.name; document.title = `${household.name} — House Pulse`; }
  const current = store.view("status");
  if (!current) return;
  const connected = current.peers.filter((p) => p.state === "connected");
  const refused = current.peers.some((p) => p.problem);
  $("sync-state").textContent = connected.length
    ? `${connected.length} other computer${connected.length === 1 ? "" : "s"} connected${refused ? ", not in sync: see More" : connected.every((p) => p.inSync) ? ", in sync" : ", syncing"}`
    : (current.peers.length ? "Other computers not reachable: changes wait here" : "This computer only");
}
