// The page's own words are the catalogue's: every key the page names is in English (and
// every `page.*` key of English is used), index.html's English is the catalogue's English
// (the words shown before the catalogue is loaded), no text or readable attribute of
// index.html is left without a key, and no English sentence is left in the modules.
// `node --test Tests/page`, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { Catalogue } from "../../Sources/PulseWeb/Resources/messages.js";

const folder = new URL("../../Sources/PulseWeb/Resources/", import.meta.url);
const english = JSON.parse(readFileSync(new URL("../../Sources/PulseHousehold/Resources/messages-en.json", import.meta.url)));
const catalogue = new Catalogue(english, "en");
const html = readFileSync(new URL("index.html", folder), "utf8");
const modules = Object.fromEntries(readdirSync(folder).filter((name) => name.endsWith(".js"))
  .map((name) => [name, readFileSync(new URL(name, folder), "utf8")]));

/** The string literals of a module ("…", '…', `…` with each ${…} as a space, and those
 * inside it), comments left out. */
function literals(source) {
  const found = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === "/" && source[i + 1] === "/") { i = source.indexOf("\n", i); if (i < 0) break; continue; }
    if (c === "/" && source[i + 1] === "*") { i = source.indexOf("*/", i) + 2; continue; }
    if (c !== "\"" && c !== "'" && c !== "`") { i++; continue; }
    let text = "";
    i++;
    while (i < source.length && source[i] !== c) {
      if (source[i] === "\\") { text += source[i + 1]; i += 2; continue; }
      if (c === "`" && source[i] === "$" && source[i + 1] === "{") {
        const start = ++i;
        let depth = 0;
        do { if (source[i] === "{") depth++; if (source[i] === "}") depth--; i++; } while (depth > 0 && i < source.length);
        found.push(...literals(source.slice(start + 1, i - 1))); // the literals inside ${…}
        text += " ";
        continue;
      }
      text += source[i++];
    }
    i++;
    found.push(text);
  }
  return found;
}

/** index.html as a tree: {tag, attrs, children} and text strings. */
function parse(source) {
  const root = { tag: "#root", attrs: {}, children: [] };
  const stack = [root];
  const voids = new Set(["meta", "link", "input", "br", "img", "hr"]);
  const token = /<!--[\s\S]*?-->|<!doctype[^>]*>|<\/([a-z0-9]+)\s*>|<([a-z0-9]+)((?:\s+[^\s=>]+(?:=(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*\/?>|[^<]+/gi;
  for (const [whole, closing, tag, attributes] of source.matchAll(token)) {
    const top = stack[stack.length - 1];
    if (closing) {
      assert.equal(top.tag, closing.toLowerCase(), `</${closing}> closes <${top.tag}>`);
      stack.pop();
    } else if (tag) {
      const attrs = {};
      for (const [, name, a, b, c] of (attributes || "").matchAll(/([^\s=]+)(?:=(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
        attrs[name] = (a ?? b ?? c ?? "").replace(/&quot;/g, "\"").replace(/&amp;/g, "&");
      }
      const node = { tag: tag.toLowerCase(), attrs, children: [] };
      top.children.push(node);
      if (!voids.has(node.tag)) stack.push(node);
    } else if (!whole.startsWith("<!")) {
      top.children.push(whole.replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">"));
    }
  }
  assert.equal(stack.length, 1, "every element of index.html is closed");
  return root;
}

function* elements(node) {
  for (const child of node.children) if (typeof child !== "string") { yield child; yield* elements(child); }
}
const textOf = (node) => node.children.map((c) => (typeof c === "string" ? c : textOf(c))).join("");
const squeeze = (text) => text.replace(/\s+/g, " ").trim();
const readable = ["aria-label", "title", "placeholder", "alt"];
const page = parse(html);

/** Every `page.*` key named in the page's files: in the modules and in index.html. */
function keysUsed() {
  const used = new Map();
  for (const [name, source] of Object.entries(modules)) {
    for (const text of literals(source)) if (/^page\./.test(text)) used.set(text, name);
  }
  for (const node of elements(page)) {
    for (const [attribute, value] of Object.entries(node.attrs)) {
      if (attribute === "data-i18n" || attribute.startsWith("data-i18n-") && readable.includes(attribute.slice("data-i18n-".length))) {
        used.set(value, "index.html");
      }
    }
  }
  return used;
}

test("every key the page names is in the English catalogue", () => {
  const used = keysUsed();
  assert.ok(used.size > 100, `only ${used.size} keys found`);
  const missing = [...used].filter(([key]) => !(key in english)).map(([key, file]) => `${file}: ${key}`);
  assert.deepEqual(missing, []);
  for (const key of used.keys()) assert.match(key, /^page(\.[a-z0-9_]+)+$/, key);
});

test("every page.* message of the English catalogue is used by the page", () => {
  const used = keysUsed();
  assert.deepEqual(Object.keys(english).filter((key) => key.startsWith("page.") && !used.has(key)), []);
});

test("the English written in index.html is the catalogue's English", () => {
  for (const node of elements(page)) {
    const key = node.attrs["data-i18n"];
    if (key) {
      const params = node.attrs["data-i18n-params"] ? JSON.parse(node.attrs["data-i18n-params"]) : {};
      for (const child of node.children) {
        if (typeof child !== "string" && child.attrs["data-i18n-param"]) params[child.attrs["data-i18n-param"]] = textOf(child);
      }
      assert.equal(squeeze(textOf(node)), squeeze(catalogue.text(key, params)), key);
    }
    for (const attribute of readable) {
      if (!(attribute in node.attrs)) continue;
      const named = node.attrs[`data-i18n-${attribute}`];
      assert.ok(named, `<${node.tag} ${attribute}="${node.attrs[attribute]}"> has no data-i18n-${attribute}`);
      assert.equal(node.attrs[attribute], catalogue.text(named), named);
    }
  }
});

test("no text of index.html is left without a key", () => {
  const left = [];
  (function walk(node, keyed) {
    if (node.tag === "script" || node.tag === "style" || node.attrs.translate === "no") return; // a name, in no language
    const here = keyed || "data-i18n" in node.attrs;
    for (const child of node.children) {
      if (typeof child === "string") { if (!here && /\p{L}/u.test(child)) left.push(squeeze(child)); } else walk(child, here);
    }
  })(page, false);
  assert.deepEqual(left, []);
});

test("no English sentence is left in the page's modules", () => {
  const words = /\b(the|a|an|is|are|and|or|not|no|of|on|in|to|with|from|for|yet|this|you|your|me|item|items|task|tasks)\b/i;
  const keyNames = new Set(["Enter", "Escape", "Home", "End", "Tab", "Backspace"]); // KeyboardEvent.key values
  // Names, the same in every language: the program's, and each language's own.
  const names = new Set(["House Pulse", "English", "Polski", "Deutsch", "Nederlands", "Bearer" /* an HTTP scheme */]);
  const left = [];
  for (const [name, source] of Object.entries(modules)) {
    for (const text of literals(source)) {
      if (/^page\./.test(text) || !/\p{L}/u.test(text) || names.has(text)) continue;
      const word = /^[A-Z][a-z]+$/.test(text) && !keyNames.has(text);
      const sentence = /^[A-Z][a-z]+[ ,.:;!?]/.test(text) || (/\s/.test(text) && (/[a-z][.!?]$/.test(text) || words.test(text)));
      if (word || sentence) left.push(`${name}: ${JSON.stringify(text)}`);
    }
  }
  assert.deepEqual(left, []);
});
