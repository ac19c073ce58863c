// Every language has every message, with the same placeholders and every plural form its
// language needs (CLDR, as the browser's Intl.PluralRules knows them). `./scripts/test.sh`
// runs this in both lanes: a missing key, a lost `{name}` or a Polish plural without
// `few` fails the tests. Also: the page and the agent read the same files.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";

const folder = new URL("../../Sources/PulseHousehold/Resources/", import.meta.url);
const catalogues = Object.fromEntries(
  readdirSync(folder)
    .filter((name) => /^messages-[a-z]{2,3}\.json$/.test(name))
    .map((name) => [name.slice("messages-".length, -".json".length), JSON.parse(readFileSync(new URL(name, folder)))]),
);
const english = catalogues.en;

/** The placeholders of a template and the branch selectors of each plural, or an error. */
export function shape(template) {
  const names = new Set();
  const plurals = [];
  let i = 0;
  function text(close) {
    while (i < template.length) {
      const c = template[i];
      if (c === close) return;
      if (c === "}") throw new Error(`unbalanced "}" at ${i}`);
      if (c === "{") { i++; argument(); continue; }
      i++;
    }
    if (close) throw new Error("unclosed branch");
  }
  function word() {
    let w = "";
    while (i < template.length && !",}{".includes(template[i])) w += template[i++];
    return w.trim();
  }
  function argument() {
    const name = word();
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) throw new Error(`bad placeholder "${name}"`);
    names.add(name);
    if (template[i] === "}") { i++; return; }
    if (template[i] !== ",") throw new Error(`expected , after ${name}`);
    i++;
    const type = word();
    if (type === "quoted") { if (template[i] !== "}") throw new Error("quoted takes nothing more"); i++; return; }
    if (template[i] !== ",") throw new Error(`expected , after ${type}`);
    i++;
    if (type === "key") { const prefix = word(); if (!prefix || template[i] !== "}") throw new Error("key needs a prefix"); i++; return; }
    if (type !== "plural" && type !== "select") throw new Error(`unknown type "${type}"`);
    const selectors = [];
    for (;;) {
      while (template[i] === " " || template[i] === "\n") i++;
      if (template[i] === "}") { i++; break; }
      let selector = "";
      while (i < template.length && template[i] !== "{" && template[i] !== " ") selector += template[i++];
      while (template[i] === " ") i++;
      if (template[i] !== "{" || !selector) throw new Error(`bad branch after ${name}`);
      i++;
      selectors.push(selector);
      text("}");
      i++;
    }
    if (!selectors.includes("other")) throw new Error(`${type} of ${name} has no "other" branch`);
    if (type === "plural") plurals.push({ name, selectors });
  }
  text(null);
  return { names: [...names].sort(), plurals };
}

test("English parses, and every other message is not empty", () => {
  assert.ok(Object.keys(english).length > 100);
  for (const [key, value] of Object.entries(english)) {
    assert.equal(typeof value, "string", key);
    assert.ok(value.length > 0 || key.endsWith(".suffix"), `${key} is empty`);
    assert.doesNotThrow(() => shape(value), key);
  }
});

test("the catalogues are English, Polish, German and Dutch", () => {
  assert.deepEqual(Object.keys(catalogues).sort(), ["de", "en", "nl", "pl"]);
});

for (const [language, messages] of Object.entries(catalogues)) {
  if (language === "en") continue;
  const needed = new Intl.PluralRules(language).resolvedOptions().pluralCategories;

  test(`${language} has every key of English and no other`, () => {
    const missing = Object.keys(english).filter((key) => !(key in messages));
    const extra = Object.keys(messages).filter((key) => !(key in english));
    assert.deepEqual(missing, [], `${language} lacks keys`);
    assert.deepEqual(extra, [], `${language} has keys English has not`);
  });

  test(`${language} keeps every placeholder and has every plural form ${needed.join("/")}`, () => {
    for (const [key, value] of Object.entries(messages)) {
      if (!(key in english)) continue;
      let ours;
      assert.doesNotThrow(() => { ours = shape(value); }, `${language} ${key}`);
      const theirs = shape(english[key]);
      assert.deepEqual(ours.names, theirs.names, `${language} ${key}: placeholders`);
      for (const plural of ours.plurals) {
        for (const category of needed) {
          assert.ok(plural.selectors.includes(category), `${language} ${key}: {${plural.name}, plural} lacks "${category}"`);
        }
      }
    }
  });

  test(`${language} is translated: no sentence is left in English`, () => {
    const left = Object.entries(messages).filter(([key, value]) =>
      key in english && value === english[key] && /[a-z]{3,}\s+[a-z]{3,}/i.test(value.replace(/\{[^}]*\}/g, "")),
    );
    assert.deepEqual(left.map(([key]) => key), []);
  });
}
