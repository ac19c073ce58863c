// More → Apps and assistants (this computer's page only, issue 59): serving the household's
// lists over CalDAV from this computer (off until turned on), the household's app passwords
// (made for one app of one member, shown once, revocable from any computer), and how each app
// is set up, with the server this computer gives and, for DAVx⁵, a QR code the agent draws.
// Every rule (who may have a password, how many, where it is served) is the agent's.
import { call, APIError } from "./api.js";
import { $, el, t, fail, toast, confirmDialog, formatTime, describe, focusInView } from "./ui.js";
import { register, store, refresh } from "./page.js";

register({
  id: "apps",
  computerOnly: true,
  // A password made or revoked on another computer arrives as a change of its row.
  topics: ["app_password"],
  reads: ["apps", "household"],
  async load() {
    const [caldav, passwords] = await Promise.all([call("caldav.get"), call("apps.passwords.list")]);
    store.set("apps", { caldav, passwords });
  },
  render,
  wire,
});

const svg = (text) => `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;

function render() {
  const apps = store.view("apps");
  if (!apps) return;
  const { caldav, passwords } = apps;
  $("apps-on").checked = caldav.on;
  $("apps-where").replaceChildren(...(caldav.on && caldav.addresses.length
    ? [t("page.apps.where"), " ", ...caldav.addresses.flatMap((a, i) => [i ? ", " : "", el("code", { translate: "no", text: a })])]
    : [caldav.on ? t("page.apps.unserved", { problem: caldav.problem ? describe(new APIError(caldav.problem.code, caldav.problem.params, caldav.problem.message)) : "none" })
      : t("page.apps.off")]));
  const qr = $("app-qr-davx5");
  qr.hidden = !caldav.davx5QR;
  if (caldav.davx5QR) qr.src = svg(caldav.davx5QR);
  $("app-passwords-empty").hidden = passwords.length > 0;
  $("app-password-list").replaceChildren(...passwords.map((p) => {
    const about = p.revoked ? t("page.apps.revoked_on", { date: formatTime(p.revoked) })
      : p.lastUsed ? t("page.apps.used", { date: formatTime(p.lastUsed) })
      : t("page.apps.never_used");
    const li = el("li", { "data-id": p.id, class: p.revoked ? "removed" : "" },
      el("div", { class: "grow" },
        el("span", { class: "name", text: p.label }),
        el("span", { class: "when", text: [t("page.apps.login", { login: p.login }), about].join(" · ") })));
    if (!p.revoked) {
      li.append(el("button", { type: "button", class: "row-button remove", text: "✕",
        "aria-label": t("page.apps.revoke_label", { name: p.label }), onclick: () => revoke(p) }));
    }
    return li;
  }));
  fillMembers();
}

async function turn(on) {
  try {
    const caldav = await call("caldav.set", { on });
    store.set("apps", { ...store.view("apps"), caldav });
  } catch (error) { fail(error); refresh("apps"); }
}

async function make(event) {
  event.preventDefault();
  const label = $("app-label").value.trim();
  const member = $("app-member").value || undefined;
  let made;
  try { made = await call("apps.passwords.create", { label, member }); } catch (error) { fail(error); return; }
  const caldav = store.view("apps")?.caldav;
  $("app-server").textContent = preferred(caldav?.addresses || []) || t("page.apps.no_server");
  $("app-user").textContent = made.record.login;
  $("app-password").textContent = made.password;
  $("app-made").hidden = false;
  $("app-label").value = "";
  toast(t("page.apps.made", { name: made.record.label }));
  refresh("apps");
  $("app-made").scrollIntoView({ block: "nearest" });
  $("app-made-close").focus();
}

/** The address to give an app: this computer's `.local` name where it has one (it keeps working
 * when the home network gives the computer a new address), else the first. */
const preferred = (addresses) => addresses.find((a) => new URL(a).hostname.endsWith(".local")) || addresses[0];

/** Hides the password for good (nothing shows it again); the focus goes back to the form. */
function closeMade() {
  $("app-password").textContent = "";
  $("app-made").hidden = true;
  focusInView($("app-label"));
}

async function revoke(p) {
  if (!(await confirmDialog(t("page.apps.revoke_title", { name: p.label }), t("page.apps.revoke_text"), t("page.apps.revoke_ok")))) return;
  try {
    await call("apps.passwords.revoke", { password: p.id });
    toast(t("page.apps.revoked", { name: p.label }));
  } catch (error) { fail(error); }
  refresh("apps");
}

function fillMembers() {
  const members = store.view("household")?.members || [];
  const select = $("app-member");
  const chosen = select.value;
  select.replaceChildren(el("option", { value: "", text: t("page.apps.member_me") }),
    ...members.map((m) => el("option", { value: m.name, text: m.name })));
  select.value = members.some((m) => m.name === chosen) ? chosen : "";
}

function wire() {
  $("apps-on").addEventListener("change", (event) => turn(event.target.checked));
  $("app-password-form").addEventListener("submit", make);
  $("app-made-close").addEventListener("click", closeMade);
}
