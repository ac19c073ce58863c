// More → Phones (this computer's page only): serving the family's phones on the home
// network (off until turned on), the phones added (removable at once), and "Add a phone":
// two QR codes drawn by the agent — the household's certificate, then the one-time link —
// with the certificate's fingerprint to compare, and "Add this phone?" when one opens it.
// Every rule (which names, which ports, the token) is the agent's; this draws and asks.
import { call, APIError } from "./api.js";
import { $, el, t, fail, toast, confirmDialog, formatTime, describe, focusInView } from "./ui.js";
import { register, store, refresh } from "./page.js";

register({
  id: "phones",
  computerOnly: true,
  // A phone asking to be added (or answered on another page): this agent's own event.
  topics: ["phone_request"],
  async load() { await store.load("phones", () => call("phones.get")); },
  render,
  wire,
});

const asked = new Set(); // requests already put to the person (one dialog each)
/** "14:02" in the reader's language (a request is minutes old). */
const clock = (ms) => new Intl.DateTimeFormat(document.documentElement.lang || undefined, { timeStyle: "short" }).format(new Date(Number(ms)));

function render() {
  const phones = store.view("phones");
  if (!phones) return;
  $("phones-on").checked = phones.on;
  $("phones-where").replaceChildren(...(phones.on && phones.addresses
    ? [t("page.phones.where"), " ", ...phones.addresses.flatMap((a, i) => [i ? ", " : "", el("code", { translate: "no", text: a })])]
    : [phones.problem ? t("page.phones.problem", { problem: describe(new APIError(phones.problem.code, phones.problem.params, phones.problem.message)) })
      : t("page.phones.off")]));
  $("phone-add-form").hidden = !phones.on;
  // The names and addresses the certificate covers (the home network's first): a phone that
  // cannot resolve `.local` names needs an address.
  const hosts = $("phone-host");
  const chosen = hosts.value;
  hosts.replaceChildren(...(phones.hosts || []).map((host) => el("option", { value: host, text: host })));
  if ((phones.hosts || []).includes(chosen)) hosts.value = chosen;
  // The household's phones (every computer lists them; a removal reaches every computer).
  $("phone-list").replaceChildren(...phones.phones.map((phone) => {
    const about = phone.removed ? t("page.phones.state.removed", { date: formatTime(phone.removed) })
      : phone.lastSeen ? t("page.phones.seen", { date: formatTime(phone.lastSeen) })
      : t("page.phones.added_by", { name: phone.addedByName || "?", date: formatTime(phone.added) });
    const li = el("li", { "data-id": phone.id, class: phone.removed ? "removed" : "" },
      el("div", { class: "grow" },
        el("span", { class: "name", text: phone.name }),
        el("span", { class: "when", text: [phone.member ? t("page.machines.member", { member: phone.member }) : null, about]
          .filter(Boolean).join(" · ") })));
    if (!phone.removed) {
      li.append(el("button", { type: "button", class: "row-button remove", text: "✕",
        "aria-label": t("page.phones.remove_label", { name: phone.name }), onclick: () => remove(phone) }));
    }
    return li;
  }));
  // Every open page of this computer asks, whichever tab it shows (issue 51); a question
  // answered elsewhere (another page, the CLI) goes away here.
  if (asking && !phones.requests.some((r) => r.id === asking)) { asking = null; $("confirm").close(); }
  for (const request of phones.requests) if (!asked.has(request.id)) { asked.add(request.id); approve(request); }
}

let asking = null;
async function approve(request) {
  asking = request.id;
  const yes = await confirmDialog(t("page.phones.approve_title"),
    t("page.phones.approve_text", { name: request.name, address: request.address, time: clock(request.asked), code: request.code }),
    t("page.phones.approve_ok"));
  asking = null;
  try {
    await call(yes ? "phones.approve" : "phones.decline", { id: request.id });
    if (yes) { toast(t("page.phones.added", { name: request.name })); closePairing(); }
  } catch (error) { fail(error); }
  refresh("phones");
}

async function remove(phone) {
  if (!(await confirmDialog(t("page.phones.remove_title", { name: phone.name }), t("page.phones.remove_text"), t("page.phones.remove_ok")))) return;
  try {
    await call("phones.remove", { id: phone.id });
    toast(t("page.phones.removed", { name: phone.name }));
  } catch (error) { fail(error); }
  refresh("phones");
}

async function turn(on) {
  try { store.set("phones", await call("phones.set", { on })); } catch (error) { fail(error); refresh("phones"); }
}

const svg = (text) => `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
let countdown = null;

async function addPhone(event) {
  event.preventDefault();
  const name = $("phone-name").value.trim();
  const member = $("phone-member").value || null;
  const host = $("phone-host").value || undefined;
  let invitation;
  try { invitation = await call("phones.invite", { name, member, host }); } catch (error) { fail(error); return; }
  $("phone-qr-setup").src = svg(invitation.setupQR);
  $("phone-qr-pair").src = svg(invitation.pairQR);
  $("phone-setup-url").textContent = invitation.setup;
  $("phone-fingerprint").textContent = invitation.fingerprint;
  $("phone-pairing").hidden = false;
  $("phone-ended").textContent = "";
  clearInterval(countdown);
  const tick = () => {
    const left = Math.max(0, Math.round((Number(invitation.expires) - Date.now()) / 1000));
    $("phone-countdown").textContent = left > 0
      ? t("page.machines.pairing.countdown", { minutes: Math.floor(left / 60), seconds: String(left % 60).padStart(2, "0") })
      : t("page.machines.pairing.expired");
    if (left === 0) { clearInterval(countdown); $("phone-ended").textContent = t("page.machines.pairing.expired"); }
    // A phone asking is known inside the agent only (no event): ask while the codes are shown.
    if (left % 2 === 0) refresh("phones");
  };
  tick();
  countdown = setInterval(tick, 1000);
  $("phone-pairing").scrollIntoView({ block: "nearest" });
}

/** Hides the codes; the focus, when it was in them ("Done"), goes back to the phone's name. */
function closePairing() {
  clearInterval(countdown);
  const focused = $("phone-pairing").contains(document.activeElement);
  $("phone-pairing").hidden = true;
  if (focused) focusInView($("phone-name"));
}

function fillMembers() {
  const members = store.view("household")?.members || [];
  const select = $("phone-member");
  const chosen = select.value;
  select.replaceChildren(el("option", { value: "", text: t("page.phones.member_none") }),
    ...members.map((m) => el("option", { value: m.name, text: m.name })));
  select.value = chosen;
}

function wire() {
  $("phones-on").addEventListener("change", (event) => turn(event.target.checked));
  $("phone-add-form").addEventListener("submit", addPhone);
  $("phone-pairing-close").addEventListener("click", closePairing);
  store.subscribe((changed) => { if (changed === "household") fillMembers(); });
}
