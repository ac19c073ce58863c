// Small helpers of the view: the page's words, elements, toasts, the confirmation dialog,
// appearance. Text from the household and from the catalogue is always set with
// textContent, never parsed as HTML.
import { APIError, usingAgent } from "./api.js";
import { Catalogue } from "./messages.js";

/**
 * An element by id (any: what an id names is the page's HTML, not known to the checker).
 * @param {string} id
 * @returns {any}
 */
export const $ = (id) => document.getElementById(id);

/**
 * The elements `selector` finds under `root`, as an array (any: what a selector names is the
 * page's HTML).
 * @param {string} selector
 * @param {ParentNode} [root]
 * @returns {any[]}
 */
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

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

// The page's words: the catalogue of the reader's language (messages.js), loaded by main.js
// before anything is drawn. Until then a message is its key, and the page's HTML keeps the
// English written in it.
let catalogue = new Catalogue({}, "en");
/** The catalogue the page's words and the agent's refusals are rendered from. */
export function useCatalogue(loaded) { catalogue = loaded; }
/** The language the page is shown in ("en", "pl", …): for Intl's dates, lists and numbers. */
export function language() { return catalogue.language; }

/**
 * Draws `items` as the rows of `list`, reusing the row drawn last time for each item whose
 * `key` (everything its row shows) is unchanged, and moving only the rows not already in place:
 * a live update of one item in a long list builds and lays out one row, not every row (WebKitGTK
 * and Firefox took 40–90 ms to draw 200 rows anew). `cache`: the caller's `Map` of key → row,
 * kept between draws. `reusable(row)`: false for a row changed in place since it was drawn (an
 * edit in it, a check-off leaving): drawn anew. The rows that go are removed first, so that a
 * kept row after them is not moved: a moved node loses the keyboard's focus (a chip after one
 * that changed, a row below one checked off).
 * @template T
 * @param {Node} list
 * @param {Map<string, Node>} cache
 * @param {T[]} items
 * @param {(item: T, index: number) => string} key
 * @param {(item: T, index: number) => Node} make
 * @param {(row: Node) => boolean} [reusable]
 */
export function drawRows(list, cache, items, key, make, reusable = () => true) {
  /** @type {Map<string, Node>} */
  const drawn = new Map();
  const rows = items.map((item, index) => {
    const k = key(item, index);
    const old = cache.get(k);
    const row = old && !drawn.has(k) && reusable(old) ? old : make(item, index);
    drawn.set(k, row);
    return row;
  });
  const kept = new Set(rows);
  for (let node = list.firstChild; node;) {
    const next = node.nextSibling;
    if (!kept.has(node)) list.removeChild(node);
    node = next;
  }
  let at = list.firstChild;
  for (const row of rows) {
    if (row === at) { at = at.nextSibling; continue; }
    list.insertBefore(row, at);
  }
  cache.clear();
  for (const [k, row] of drawn) cache.set(k, row);
}
/** The message `key` with `params`, in the reader's language. */
export function t(key, params = {}) { return catalogue.text(key, params); }

/** A kids' item or ledger line as the reader reads it: a built-in catalogue item in the
 * reader's language (`titleKey`, while the family has not given it its own words), an
 * adjustment from its reason, else the household's own text. */
export function titleOf(item) {
  if (item.titleKey && catalogue.has(item.titleKey)) return catalogue.text(item.titleKey);
  if (item.reason !== undefined && item.reason !== null) return catalogue.text("kids.adjustment", { reason: item.reason });
  return item.title;
}

/**
 * The message `key` as nodes for `append`: a parameter that is a DOM node (a `<code>`, a
 * `<strong>`) stands where the language's sentence puts it; the rest is text.
 */
export function tNodes(key, params = {}) {
  const nodes = [], marked = {};
  for (const [name, value] of Object.entries(params)) {
    if (value instanceof Node) { marked[name] = `\uE000${nodes.length}\uE001`; nodes.push(value); } else marked[name] = value;
  }
  const used = new Set();
  return t(key, marked).split(/\uE000(\d+)\uE001/).map((part, i) => {
    if (i % 2 === 0) return part;
    const node = nodes[Number(part)];
    if (used.has(node)) return node.cloneNode(true);
    used.add(node);
    return node;
  }).filter((part) => part !== "");
}

const translatedAttributes = ["aria-label", "title", "placeholder", "alt"];
/**
 * Puts the page's own words in the reader's language: `data-i18n="key"` sets an element's
 * text (`data-i18n-params` holds JSON parameters; a child with `data-i18n-param="name"`
 * is that parameter, kept as it is), `data-i18n-aria-label`, `data-i18n-title`,
 * `data-i18n-placeholder` and `data-i18n-alt` set those attributes. A key the catalogue
 * lacks leaves the English of the HTML.
 */
export function translateDocument(root = document) {
  for (const node of $$("[data-i18n]", root)) {
    const key = node.dataset.i18n;
    if (!catalogue.has(key)) continue;
    // Already in these words (English over the English written in index.html): left alone.
    if (!node.dataset.i18nParams && node.childElementCount === 0 && node.textContent === t(key)) continue;
    const params = node.dataset.i18nParams ? JSON.parse(node.dataset.i18nParams) : {};
    for (const child of $$(":scope > [data-i18n-param]", node)) params[child.dataset.i18nParam] = child;
    node.replaceChildren(...tNodes(key, params));
  }
  for (const attribute of translatedAttributes) {
    for (const node of root.querySelectorAll(`[data-i18n-${attribute}]`)) {
      const key = node.getAttribute(`data-i18n-${attribute}`);
      if (catalogue.has(key) && node.getAttribute(attribute) !== t(key)) node.setAttribute(attribute, t(key));
    }
  }
}

/** A moment (Unix ms) as a date in the reader's language, in this computer's time zone. */
export function formatTime(milliseconds) {
  return new Intl.DateTimeFormat(language(), { dateStyle: "medium" }).format(new Date(Number(milliseconds)));
}

/** A moment (Unix ms) as a time of day, in the reader's language ("17:02", "5:02 PM"). */
export function formatClock(milliseconds) {
  return new Intl.DateTimeFormat(language(), { timeStyle: "short" }).format(new Date(Number(milliseconds)));
}

/** A moment (Unix ms) as a date and a time of day, in the reader's language. */
export function formatMoment(milliseconds) {
  return new Intl.DateTimeFormat(language(), { dateStyle: "medium", timeStyle: "short" }).format(new Date(Number(milliseconds)));
}

/** A day (`YYYY-MM-DD`) in the reader's language; anything else as it is. */
export function formatDay(day) {
  const parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day || "");
  if (!parts) return day || "";
  return new Intl.DateTimeFormat(language(), { dateStyle: "medium", timeZone: "UTC" })
    .format(Date.UTC(Number(parts[1]), Number(parts[2]) - 1, Number(parts[3])));
}

export function todayISO() {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/**
 * Edits a name in place: `node` (the name shown) becomes a field holding `value`; Enter or
 * leaving it keeps the text, Escape leaves it as it was. `save(text)` runs only for a text
 * that is not empty and has changed; `done()` runs after, either way (to redraw).
 */
export function editInPlace(node, { value, maxlength, label, save, done }) {
  // `data-editing` while it is being typed in: the page's redraws wait for it (page.js), and are
  // made once it ends ("edit-ended").
  const input = el("input", { class: "edit", value, maxlength: String(maxlength), "aria-label": label, "data-editing": "true" });
  node.replaceWith(input);
  input.focus(); input.select();
  let finished = false;
  const finish = async (keep) => {
    if (finished) return; finished = true;
    delete input.dataset.editing;
    const text = input.value.trim();
    if (keep && text && text !== value) {
      try { await save(text); } catch (error) { fail(error); }
    }
    done();
    document.dispatchEvent(new Event("edit-ended"));
  };
  // Enter and Escape taken here (preventDefault): a redraw made by the save moves the focus to the
  // row's first button, and the key's own press then clicked it — an item renamed with Enter was
  // checked off at once.
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); finish(true); }
    if (e.key === "Escape") { e.preventDefault(); finish(false); }
  });
  input.addEventListener("blur", () => finish(true));
}

/**
 * Gives `node` the focus and shows it, in the middle of the screen: after a panel above it
 * closes, the More tab's two columns are balanced again and the node moves; WebKitGTK scrolled
 * to where it was (a keyboard's "Done" left the focus off the screen, under another card).
 * @param {HTMLElement} node
 */
export function focusInView(node) {
  node.focus({ preventScroll: true });
  node.scrollIntoView({ block: "center" });
}

export function pulse(node) { node.classList.remove("pulse"); void node.offsetWidth; node.classList.add("pulse"); }

let toastTimer = null;
/**
 * Says `text` for `seconds`, with a button `action` doing `onAction`; `error`: as a refusal.
 * @param {string} text
 * @param {{ action?: string, onAction?: () => void, error?: boolean, seconds?: number }} options
 */
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

// The page's own messages for what is not the household's refusal.
const pageErrors = {
  unreachable: "page.error.unreachable",
  not_signed_in: "page.error.not_signed_in",
};

/** A refusal or a failure in the reader's words: from its code and parameters. */
export function describe(error) {
  if (!(error instanceof APIError)) return String(error?.message || error);
  if (pageErrors[error.code]) return t(pageErrors[error.code]);
  // A phone using another agent of an older release, which lacks the method (issue 53).
  if (error.code === "unknown_method" && usingAgent()) return t("page.roaming.older_agent", { name: usingAgent().name || "?" });
  const key = `refusal.${error.code}`;
  return sentence(catalogue.has(key) ? catalogue.text(key, error.params) : error.message);
}

/** A refusal shown on its own starts as a sentence does (the catalogue's refusals are written
 * to follow "Error: " on the command line). */
function sentence(text) {
  return text ? text.charAt(0).toLocaleUpperCase(language()) + text.slice(1) : text;
}

export function fail(error) {
  if (!(error instanceof APIError)) console.error(error);
  toast(describe(error), { error: true, seconds: 6 });
}

export function confirmDialog(title, text, ok = t("page.confirm.delete")) {
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
  for (const radio of $$('input[name="appearance"]')) radio.checked = radio.value === appearanceSetting;
}
systemDark.addEventListener("change", () => applyAppearance(appearanceSetting));
