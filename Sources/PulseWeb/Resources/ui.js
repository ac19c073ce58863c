// Small helpers of the view: elements, toasts, the confirmation dialog, appearance.
// Text from the household is always set with textContent, never parsed as HTML.
import { APIError } from "./api.js";

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs = {}, ...children) {
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

export function todayISO() {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

export function pulse(node) { node.classList.remove("pulse"); void node.offsetWidth; node.classList.add("pulse"); }

let toastTimer = null;
export function toast(text, { action, onAction, error = false, seconds = 4 } = {}) {
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
export function hideToast() { $("toast").hidden = true; }

// The page's own words for what is not the household's refusal.
const pageErrors = {
  unreachable: "House Pulse on this computer did not answer.",
  not_signed_in: "Not signed in.",
};
let catalogue = null;
/** The catalogue refusals are rendered from (set once it is loaded). */
export function useCatalogue(loaded) { catalogue = loaded; }

/** A refusal or a failure in the reader's words: from its code and parameters. */
export function describe(error) {
  if (!(error instanceof APIError)) return String(error?.message || error);
  if (pageErrors[error.code]) return pageErrors[error.code];
  const key = `refusal.${error.code}`;
  return catalogue?.has(key) ? catalogue.text(key, error.params) : error.message;
}

export function fail(error) {
  if (!(error instanceof APIError)) console.error(error);
  toast(describe(error), { error: true, seconds: 6 });
}

export function confirmDialog(title, text, ok = "Delete") {
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

// "system" follows the browser's colour scheme, also when it changes while the page is open.
const systemDark = window.matchMedia("(prefers-color-scheme: dark)");
let appearanceSetting = "system";
export function applyAppearance(appearance) {
  appearanceSetting = ["light", "dark"].includes(appearance) ? appearance : "system";
  const dark = appearanceSetting === "dark" || (appearanceSetting === "system" && systemDark.matches);
  document.documentElement.dataset.appearance = dark ? "dark" : "light";
  for (const radio of document.querySelectorAll('input[name="appearance"]')) radio.checked = radio.value === appearanceSetting;
}
systemDark.addEventListener("change", () => applyAppearance(appearanceSetting));

export function plural(n, one, many) { return `${n} ${n === 1 ? one : many}`; }
