// The page's tabs are one list (issue 55): each tab is a part that registers itself with
// `tab: true` (page.js), and index.html has its panel (`<section id="tab-ID">`) and its button
// (`data-tab="ID"`, `aria-controls="tab-ID"`) — no tab without the others. The agent reads its
// tabs from index.html (ComputerPage.tabs) and WebTests holds a notification's tab to them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";

const folder = new URL("../../Sources/PulseWeb/Resources/", import.meta.url);
const read = (name) => readFileSync(new URL(name, folder), "utf8");

test("every tab a module registers has its panel and its button in the page, and no other tab has either", () => {
  const registered = new Set();
  for (const name of readdirSync(folder).filter((name) => name.endsWith(".js"))) {
    for (const match of read(name).matchAll(/register\(\{\s*id:\s*"([a-z-]+)",\s*tab:\s*true/g)) registered.add(match[1]);
  }
  const html = read("index.html");
  const panels = new Set([...html.matchAll(/<section id="tab-([a-z-]+)"/g)].map((match) => match[1]));
  const buttons = new Set([...html.matchAll(/role="tab" id="t-([a-z-]+)" data-tab="\1" aria-controls="tab-\1"/g)].map((match) => match[1]));
  assert.ok(registered.size >= 5, `the tabs found: ${[...registered]}`);
  assert.deepEqual([...panels].sort(), [...registered].sort(), "a panel for each tab registered");
  assert.deepEqual([...buttons].sort(), [...registered].sort(), "a button for each tab registered");
});
