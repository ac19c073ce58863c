// The page's message formatting, without an agent or a browser: `node --test Tests/page`.
// The same cases run through the agent's formatter (MessageFormatTests.swift): one grammar.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Catalogue, pluralCategory } from "../../Sources/PulseWeb/Resources/messages.js";

const fixtures = JSON.parse(readFileSync(new URL("./format-cases.json", import.meta.url)));
const english = JSON.parse(readFileSync(new URL("../../Sources/PulseHousehold/Resources/messages-en.json", import.meta.url)));

test("every shared case formats as the agent formats it", () => {
  const catalogue = new Catalogue(fixtures.messages, "en");
  for (const c of fixtures.cases) assert.equal(catalogue.format(c.template, c.params), c.expected, c.template);
});

test("a refusal is rendered from its code and parameters, never from a sentence", () => {
  const catalogue = new Catalogue(english, "en");
  const text = catalogue.refusal("focus_rule", { limit: 3, active: 3, titles: ["Dishes", "Laundry", "Vacuum"] });
  assert.equal(text, "focus rule: at most 3 active tasks, and there are 3 active (Dishes, Laundry, Vacuum). Finish or delete one first.");
  assert.doesNotMatch(text, /--force/);
  assert.equal(catalogue.refusal("not_found", { kind: "item", list: "shopping_list", handle: "Milk" }), "no item \"Milk\" in the shopping list");
  assert.equal(catalogue.refusal("pin_locked", { retryAfterSeconds: 20 }), "too many wrong attempts: try again in 20 s");
});

test("the page's plural rule is CLDR's for every whole number to 1000 (a node without full ICU fails here)", () => {
  const table = JSON.parse(readFileSync(new URL("./plural-cldr.json", import.meta.url))).categories;
  for (const [language, list] of Object.entries(table)) {
    list.split(" ").forEach((category, n) => assert.equal(pluralCategory(n, language), category, `${language} ${n}`));
  }
});

test("Polish counts peanuts as a Pole does", () => {
  const polish = new Catalogue({ peanuts: "{n, plural, one {# orzeszek} few {# orzeszki} many {# orzeszków} other {# orzeszka}}" }, "pl");
  const said = [1, 2, 5, 22, 25, 112].map((n) => polish.text("peanuts", { n }));
  assert.deepEqual(said, ["1 orzeszek", "2 orzeszki", "5 orzeszków", "22 orzeszki", "25 orzeszków", "112 orzeszków"]);
});

test("an unknown key shows the key, not nothing", () => {
  assert.equal(new Catalogue({}, "en").text("refusal.from_the_future", {}), "refusal.from_the_future");
});

test("every message of the English catalogue formats without leaving a brace", () => {
  const catalogue = new Catalogue(english, "en");
  for (const key of Object.keys(english)) {
    const text = catalogue.text(key, { count: 2, active: 2, limit: 3, kind: "item", list: "shopping_list", peanuts: 1, balance: 0 });
    assert.doesNotMatch(text, /[{}]/, key);
  }
});
