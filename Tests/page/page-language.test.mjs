// The page's words in the reader's language: messages with DOM nodes as parameters, the
// page's own errors, days and repeating schedules through Intl. ui.js and more.js run in
// node with a stand-in for the little of `window` they touch when loaded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Catalogue } from "../../Sources/PulseWeb/Resources/messages.js";

globalThis.window = { matchMedia: () => ({ matches: false, addEventListener() {} }) };
globalThis.Node = class Node { cloneNode() { return Object.assign(new Node(), this, { clone: true }); } };
const { t, tNodes, useCatalogue, language, describe, formatDay } = await import("../../Sources/PulseWeb/Resources/ui.js");
const { describeSchedule } = await import("../../Sources/PulseWeb/Resources/more.js");
const { APIError } = await import("../../Sources/PulseWeb/Resources/api.js");

const english = JSON.parse(readFileSync(new URL("../../Sources/PulseHousehold/Resources/messages-en.json", import.meta.url)));
const inEnglish = () => useCatalogue(new Catalogue(english, "en"));

test("before the catalogue is loaded a message is its key; after, the language's words", () => {
  assert.equal(t("page.tasks.today"), "page.tasks.today");
  inEnglish();
  assert.equal(language(), "en");
  assert.equal(t("page.tasks.today"), "Today");
  assert.equal(t("page.shopping.new_items", { count: 3 }), "New items added (3)");
  assert.equal(t("page.shopping.cleared", { count: 1 }), "Cleared 1 item");
  assert.equal(t("page.shopping.cleared", { count: 4 }), "Cleared 4 items");
  assert.equal(t("page.tasks.deleted", { title: "Dishes" }), "Deleted “Dishes”");
  assert.equal(t("page.shopping.restocked", { names: ["Milk", "Eggs"] }), "Back from the restock pool: Milk, Eggs");
});

test("the counts and states of the header and the machines are whole sentences", () => {
  inEnglish();
  assert.equal(t("page.sync.connected", { count: 1, state: "synced" }), "1 other computer connected, in sync");
  assert.equal(t("page.sync.connected", { count: 2, state: "syncing" }), "2 other computers connected, syncing");
  assert.equal(t("page.sync.connected", { count: 2, state: "problem" }), "2 other computers connected, not in sync: see More");
  assert.equal(t("page.machines.state.sending", { count: 1 }), "sending 1 change");
  assert.equal(t("page.machines.state.receiving", { count: 12 }), "receiving 12 changes");
  assert.equal(t("page.machines.state.last_seen", { date: "Nov 25, 2026" }), "not connected, last seen Nov 25, 2026");
  assert.equal(t("page.kids.balance", { balance: 1 }), "🥜 1 peanut");
  assert.equal(t("page.kids.earn.label_done", { title: "Feed the pet", peanuts: 2 }), "Feed the pet, 2 peanuts, done today");
  assert.equal(t("page.tasks.focus.rule", { limit: 3 }), "at most 3 active tasks. Finish one before starting another.");
});

test("a node given as a parameter stands where the language's sentence puts it", () => {
  inEnglish();
  const code = new Node();
  const parts = tNodes("page.signed_out.text", { command: code });
  assert.deepEqual(parts, ["This browser is not signed in. Run ", code, " on this computer: it opens House Pulse here, signed in."]);
  useCatalogue(new Catalogue({ twice: "{x} and {x}, {n}" }, "en"));
  const [first, , second, rest] = tNodes("twice", { x: code, n: 2 });
  assert.equal(first, code);
  assert.ok(second.clone, "a node used twice is copied");
  assert.equal(rest, ", 2");
});

test("the page's own errors are messages; a refusal is the agent's by its code", () => {
  inEnglish();
  assert.equal(describe(new APIError("unreachable")), "House Pulse on this computer did not answer.");
  assert.equal(describe(new APIError("not_signed_in")), "Not signed in.");
  assert.equal(describe(new APIError("wrong_pin")), "Wrong PIN", "a refusal shown alone starts as a sentence");
  assert.equal(describe(new APIError("from_the_future", {}, "the agent's words")), "The agent's words");
  useCatalogue(new Catalogue({ "page.error.unreachable": "House Pulse na tym komputerze nie odpowiedział." }, "pl"));
  assert.equal(describe(new APIError("unreachable")), "House Pulse na tym komputerze nie odpowiedział.");
});

test("a day is written as its language writes days", () => {
  inEnglish();
  assert.equal(formatDay("2026-11-21"), "Nov 21, 2026");
  assert.equal(formatDay("someday"), "someday");
  useCatalogue(new Catalogue({}, "de"));
  assert.equal(formatDay("2026-11-21"), "21.11.2026");
});

test("a repeating schedule in words, with the language's weekday names and ordinals", () => {
  inEnglish();
  assert.equal(describeSchedule("daily"), "Every day");
  assert.equal(describeSchedule("weekly:mon"), "Every Monday");
  assert.equal(describeSchedule("weekly:mon,thu"), "Every Monday and Thursday");
  assert.equal(describeSchedule("weekly:sat,sun,mon"), "Every Saturday, Sunday, and Monday");
  const monthly = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31].map((day) => describeSchedule(`monthly:${day}`).replace("Monthly, on the ", ""));
  assert.deepEqual(monthly, ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"]);
  assert.equal(describeSchedule("weekly:someday"), "weekly:someday");
  useCatalogue(new Catalogue({ "page.schedule.weekly": "w dni: {days}", "page.schedule.monthly": "{day}. dnia miesiąca" }, "pl"));
  assert.equal(describeSchedule("weekly:mon,thu"), "w dni: poniedziałek i czwartek");
  assert.equal(describeSchedule("monthly:15"), "15. dnia miesiąca");
  useCatalogue(new Catalogue({ "page.schedule.weekly": "jeden {days}" }, "de"));
  assert.equal(describeSchedule("weekly:tue,fri"), "jeden Dienstag und Freitag");
});
