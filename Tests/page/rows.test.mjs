// A list's rows drawn again (ui.drawRows): a row whose item did not change is the same node,
// left where it is; only new or changed rows are built, only misplaced ones moved. Run in node
// with a stand-in list that counts what is done to it.
import { test } from "node:test";
import assert from "node:assert/strict";

globalThis.window = { matchMedia: () => ({ matches: false, addEventListener() {} }) };
const { drawRows } = await import("../../Sources/PulseWeb/Resources/ui.js");

/** A list element as drawRows uses it: its children in order, and the moves made on it. */
class List {
  constructor() { this.children = []; this.inserted = 0; this.removed = 0; this.moved = []; }
  get firstChild() { return this.children[0] ?? null; }
  insertBefore(node, before) {
    const was = this.children.indexOf(node);
    if (was >= 0) { this.children.splice(was, 1); this.moved.push(node.name); }
    const at = before ? this.children.indexOf(before) : this.children.length;
    this.children.splice(at, 0, node);
    node.list = this;
    this.inserted += 1;
  }
  removeChild(node) { this.children.splice(this.children.indexOf(node), 1); node.list = null; this.removed += 1; }
}
/** A row: its item's name, and its next sibling as the list holds it. */
class Row {
  constructor(name) { this.name = name; }
  get nextSibling() { const c = this.list.children; return c[c.indexOf(this) + 1] ?? null; }
}

function draw(list, cache, names, made, reusable) {
  drawRows(list, cache, names, (name) => name, (name) => { made.push(name); return new Row(name); }, reusable);
  return list.children.map((row) => row.name);
}

test("a row whose item is unchanged is kept as it is; only the new one is built and placed", () => {
  const list = new List(), cache = new Map();
  const made = [];
  assert.deepEqual(draw(list, cache, ["Milk", "Eggs", "Bread"], made), ["Milk", "Eggs", "Bread"]);
  const before = [...list.children];
  list.inserted = 0; made.length = 0;
  assert.deepEqual(draw(list, cache, ["Kiwi", "Milk", "Eggs", "Bread"], made), ["Kiwi", "Milk", "Eggs", "Bread"]);
  assert.deepEqual(made, ["Kiwi"]);
  assert.equal(list.inserted, 1, "one insertion, the others left in place");
  assert.deepEqual(list.children.slice(1), before);
});

test("a row gone is removed, a changed one is built anew in its place, a moved one moved", () => {
  const list = new List(), cache = new Map();
  const made = [];
  draw(list, cache, ["Milk", "Eggs", "Bread", "Oats"], made);
  made.length = 0;
  // Eggs checked off, Bread renamed Rye, Oats moved first.
  assert.deepEqual(draw(list, cache, ["Oats", "Milk", "Rye"], made), ["Oats", "Milk", "Rye"]);
  assert.deepEqual(made, ["Rye"]);
  assert.equal(cache.size, 3, "only the rows drawn are kept");
  // Drawn again unchanged: nothing built, nothing moved, nothing removed.
  list.inserted = 0; list.removed = 0; made.length = 0;
  draw(list, cache, ["Oats", "Milk", "Rye"], made);
  assert.deepEqual([made.length, list.inserted, list.removed], [0, 0, 0]);
});

test("a row changed in place since it was drawn (an edit in it) is never reused", () => {
  const list = new List(), cache = new Map();
  const made = [];
  draw(list, cache, ["Milk", "Eggs"], made);
  const edited = list.children[1];
  made.length = 0;
  draw(list, cache, ["Milk", "Eggs"], made, (row) => row !== edited);
  assert.deepEqual(made, ["Eggs"]);
  assert.notEqual(list.children[1], edited);
  assert.deepEqual(list.children.map((row) => row.name), ["Milk", "Eggs"]);
});

test("a kept row after one that went or changed is left where it is, never moved (a moved node loses its focus)", () => {
  const list = new List(), cache = new Map();
  const made = [];
  // The list switcher: the first list's count changed, Lidl's chip and "+ List" did not.
  draw(list, cache, ["Shopping List 3", "Lidl 0", "+ List"], made);
  const [, lidl, add] = list.children;
  list.moved.length = 0; made.length = 0;
  assert.deepEqual(draw(list, cache, ["Shopping List 4", "Lidl 0", "+ List"], made), ["Shopping List 4", "Lidl 0", "+ List"]);
  assert.deepEqual(made, ["Shopping List 4"]);
  assert.deepEqual(list.moved, [], "nothing kept was moved");
  assert.deepEqual([list.children[1], list.children[2]], [lidl, add]);
  // A row checked off above two kept ones: they stay where they are.
  draw(list, cache, ["Milk", "Eggs", "Bread", "Oats"], made);
  list.moved.length = 0;
  assert.deepEqual(draw(list, cache, ["Milk", "Bread", "Oats"], made), ["Milk", "Bread", "Oats"]);
  assert.deepEqual(list.moved, []);
});
