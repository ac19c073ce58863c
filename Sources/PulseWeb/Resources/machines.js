// More → Computers: the household's machines with the names people gave them (renamable,
// replicated), whether each is connected and in step or when it was last seen, removed
// ones; removing one (permanent, said so); "Add a computer": a pairing code, large, with
// its countdown and what to do on the other computer. Sync is said in people's words
// ("in sync", "sending 12 changes"), from the agent's status, never worked out here.
import { call, invite, status } from "./api.js";
import { $, el, t, tNodes, fail, toast, confirmDialog, formatTime, language, editInPlace, focusInView } from "./ui.js";
import { register, store, refresh } from "./page.js";

register({
  id: "machines",
  computerOnly: true,
  topics: ["peer.", "machine", "machine_removal"],
  reads: ["machines", "status"],
  async load() { await store.load("machines", () => call("machine.list")); },
  render,
  wire,
});

// The conflict log in the reader's words: the agent renders each summary in the page's
// language; the date is the kept change's (its stamp's upper 48 bits are Unix ms).
register({
  id: "conflicts",
  computerOnly: true,
  topics: ["conflict"],
  async load() { await store.load("conflicts", () => call("conflicts.list", { limit: 20, language: language() })); },
  render() {
    const conflicts = store.view("conflicts") || [];
    $("conflict-list").replaceChildren(...conflicts.map((c) => el("li", {},
      el("span", { class: "grow", text: c.summary }), el("span", { class: "when", text: formatTime(Number(BigInt(c.kept.hlc) >> 16n)) }))));
    $("conflicts-empty").hidden = conflicts.length > 0;
  },
});

function peerOf(machine) { return (store.view("status")?.peers || []).find((p) => p.machineID === machine.id) || null; }

/** The release a machine runs and its protocol: this one's from the status, a peer's from its HELLO. */
function softwareOf(machine) {
  if (machine.isThisMachine) {
    const m = store.view("status")?.machine;
    const release = m?.software?.split(" ")[1];
    return release && m.protocols ? { release, protocol: m.protocols } : null;
  }
  const peer = peerOf(machine);
  return peer?.protocolVersion ? { release: peer.release || "?", protocol: String(peer.protocolVersion) } : null;
}

/** What a machine is doing, in words: [text, class]. */
function stateOf(machine) {
  if (machine.isThisMachine) return ["", ""]; // its name says "(this computer)"
  if (machine.removed) return [t("page.machines.state.removed", { date: formatTime(machine.removed) }), "gone"];
  const peer = peerOf(machine);
  if (peer?.problem) return [t("page.machines.state.problem"), ""];
  if (peer?.state === "connected") {
    if (peer.inSync) return [t("page.machines.state.in_sync"), "ok"];
    if (peer.peerLacks) return [t("page.machines.state.sending", { count: peer.peerLacks }), ""];
    if (peer.weLack) return [t("page.machines.state.receiving", { count: peer.weLack }), ""];
    return [t("page.machines.state.syncing"), ""];
  }
  if (peer?.lastSeen) return [t("page.machines.state.last_seen", { date: formatTime(peer.lastSeen) }), "gone"];
  return [t("page.machines.state.not_seen"), "gone"];
}

function render() {
  const machines = store.view("machines");
  if (!machines) return;
  const joined = known && !$("pairing").hidden ? machines.find((m) => !known.has(m.id)) : null;
  if (joined) { closePairing(); toast(t("page.machines.joined", { name: joined.name })); }
  $("machine-list").replaceChildren(...machines.map((machine) => {
    const [state, kind] = stateOf(machine);
    const name = el("span", { class: "name", text: machine.isThisMachine ? t("page.machines.this_name", { name: machine.name }) : machine.name });
    const who = machine.member ? el("span", { class: "when", text: t("page.machines.member", { member: machine.member }) }) : null;
    const runs = softwareOf(machine);
    const software = runs ? el("span", { class: "when", text: t("page.machines.software", runs) }) : null;
    // An older entry of a computer that joined again (the agent found the later namesake),
    // while it is not connected: said, and its removal offered in words.
    const older = machine.namesakeJoined && peerOf(machine)?.state !== "connected"
      ? el("span", { class: "older-entry", text: t("page.machines.older_entry", { name: machine.name, date: formatTime(machine.namesakeJoined) }) }) : null;
    const li = el("li", { "data-id": machine.id, class: machine.removed ? "removed" : older ? "older" : "" },
      el("div", { class: "grow" }, name, who, software, older),
      el("span", { class: `state ${kind}`, text: state }));
    if (!machine.removed) {
      li.append(el("button", { type: "button", class: "row-button rename", text: t("page.machines.rename"),
        "aria-label": t("page.machines.rename_label", { name: machine.name }), onclick: () => rename(machine, name) }));
    }
    if (!machine.removed && !machine.isThisMachine) {
      li.append(el("button", { type: "button", class: "row-button remove", text: older ? t("page.machines.remove_older") : "✕",
        "aria-label": t(older ? "page.machines.remove_older_label" : "page.machines.remove_label", { name: machine.name }),
        onclick: () => remove(machine) }));
    }
    return li;
  }));
  // The agent's warnings as data (key and parameters), in the reader's words.
  const m = store.view("status")?.machine;
  const notices = m ? m.notices || m.warnings.map((detail) => ({ key: "status.problem", params: { detail } })) : [];
  const problems = (store.view("status")?.peers || []).filter((p) => p.problem)
    .map((p) => p.notice || { key: "page.machines.problem", params: { name: p.name || "?", detail: p.problem } });
  $("machine-notices").replaceChildren(...[...notices, ...problems].map((n) => el("li", {}, el("span", { class: "grow muted", text: t(n.key, n.params) }))));
}

function rename(machine, name) {
  editInPlace(name, {
    value: machine.name, maxlength: 100, label: t("page.machines.rename_label", { name: machine.name }),
    save: (text) => call("machine.rename", { machine: machine.id, name: text }),
    done: () => { refresh("machines"); render(); },
  });
}

async function remove(machine) {
  if (!(await confirmDialog(t("page.machines.remove_title", { name: machine.name }), t("page.machines.remove_text", { name: machine.name }),
    t("page.machines.remove_ok")))) return;
  try {
    await call("machine.remove", { machine: machine.id });
    toast(t("page.machines.removed", { name: machine.name }));
  } catch (error) { fail(error); }
  refresh("machines", "status");
}

// ---- Add a computer ----

let countdown = null;
let known = null; // the machines when the code was shown: a new one has joined with it
async function addComputer() {
  let invitation;
  try {
    invitation = await invite();
  } catch (error) { fail(error); return; }
  known = new Set((store.view("machines") || []).map((m) => m.id));
  $("pairing").hidden = false;
  $("pairing-code").textContent = invitation.code;
  $("pairing-cli").replaceChildren(...tNodes("page.machines.pairing.cli",
    { command: el("code", { translate: "no", text: `pulse-peer join ${invitation.code}` }) }));
  const addresses = invitation.addresses || [];
  $("pairing-address").hidden = addresses.length === 0;
  $("pairing-address").replaceChildren(...tNodes("page.machines.pairing.address",
    { address: el("code", { translate: "no", text: addresses.join("  ·  ") }) }));
  clearInterval(countdown);
  const tick = () => {
    const left = Math.max(0, Math.round((Number(invitation.expires) - Date.now()) / 1000));
    $("pairing-countdown").textContent = left > 0
      ? t("page.machines.pairing.countdown", { minutes: Math.floor(left / 60), seconds: String(left % 60).padStart(2, "0") })
      : t("page.machines.pairing.expired");
    if (left === 0) { clearInterval(countdown); $("pairing-code").classList.add("expired"); $("pairing-ended").textContent = t("page.machines.pairing.expired"); }
    // The new computer is admitted inside the agent (no event for it): ask while the code is shown,
    // and whether the code still works (three wrong codes, or a join, end it before its time).
    if (left % 2 === 0) {
      refresh("machines");
      const shown = countdown;
      status().then((current) => {
        if (shown !== countdown || Number(current.machine.invitationExpires) === Number(invitation.expires)) return;
        clearInterval(countdown);
        $("pairing-code").classList.add("expired");
        $("pairing-countdown").textContent = t("page.machines.pairing.ended");
        $("pairing-ended").textContent = t("page.machines.pairing.ended");
      }, () => {});
    }
  };
  $("pairing-code").classList.remove("expired");
  $("pairing-ended").textContent = "";
  tick();
  countdown = setInterval(tick, 1000);
  $("pairing").scrollIntoView({ block: "nearest" });
}

/** Hides the code; the focus, when it was in it ("Done"), goes back to "Add a computer". */
function closePairing() {
  clearInterval(countdown);
  known = null;
  const focused = $("pairing").contains(document.activeElement);
  $("pairing").hidden = true;
  if (focused) focusInView($("add-computer"));
}

function wire() {
  $("add-computer").addEventListener("click", addComputer);
  $("pairing-close").addEventListener("click", closePairing);
}
