// More → This computer: which member uses it (`whoami.set`: "Me" in Tasks, whose
// notifications), and which notifications it shows and how long it gathers changes
// (`notifications.set`: this computer's own choice, kept in its local settings).
import { call } from "./api.js";
import { $, el, t, fail } from "./ui.js";
import { register, store, refresh } from "./page.js";
import { members } from "./household.js";

const kinds = ["shopping", "assigned", "tasks", "kids"];

register({
  id: "notifications",
  computerOnly: true,
  topics: [],
  reads: ["notifications", "household"],
  async load() { await store.load("notifications", () => call("notifications.get")); },
  render,
  wire,
});

function render() {
  const select = $("computer-member");
  if (document.activeElement !== select) {
    const everyone = members();
    const mine = everyone.find((m) => m.isThisMachine);
    // Nobody yet: said, not shown as the first member.
    const nobody = mine ? [] : [el("option", { value: "", text: t("page.computer.member.none"), disabled: true })];
    select.replaceChildren(...nobody, ...everyone.map((m) => el("option", { value: m.id, text: m.name })));
    select.value = mine?.id || "";
  }
  const settings = store.view("notifications");
  if (!settings) return;
  for (const kind of kinds) $(`notify-${kind}`).checked = !!settings[kind];
  $("notify-window").value = String(settings.windowSeconds);
}

async function set(params) {
  try { store.set("notifications", await call("notifications.set", params)); } catch (error) { fail(error); refresh("notifications"); }
}

function wire() {
  $("computer-member").addEventListener("change", async (e) => {
    try { await call("whoami.set", { member: e.target.value }); } catch (error) { fail(error); }
    refresh("household", "tasks", "machines");
  });
  for (const kind of kinds) $(`notify-${kind}`).addEventListener("change", (e) => set({ [kind]: e.target.checked }));
  $("notify-window").addEventListener("change", (e) => set({ windowSeconds: Number(e.target.value) }));
}
