// Chores that rotate (issue 58): under a repeating task, whose turn is next and how many
// each person did this month; who takes turns when one is added; a swap of the next turn;
// the household's days away. Whose turn it is is the agent's rule (RotationRules): the page
// only shows the turns it is given and sends what a person chose.
import { call } from "./api.js";
import { $, el, t, fail, formatDay, todayISO } from "./ui.js";
import { register, store, refresh } from "./page.js";

register({
  id: "away",
  topics: ["away", "member"],
  async load() { await store.load("away", () => call("away.list")); },
  render: renderAway,
  wire,
});

/** The lines under a rotating template: the next turns, then this month's counts. */
export function rotationLines(template) {
  if (!template.rotation?.length) return [];
  const turns = template.turns || [];
  const name = (turn) => turn.member ?? t("page.more.rotation.nobody");
  const lines = [];
  if (turns.length) {
    lines.push(el("span", { class: "turns", text: t("page.more.rotation.next", {
      name: name(turns[0]), day: formatDay(turns[0].period), today: turns[0].period === todayISO() ? "yes" : "no",
      more: turns.length > 1 ? "yes" : "no", then: turns.slice(1).map(name).join(", "),
    }) }));
  }
  const counts = (template.doneThisMonth || []).map((count) => t("page.more.rotation.count", { name: count.member, count: count.done }));
  lines.push(el("span", { class: "counts", text: t("page.more.rotation.month", { counts: counts.join(" · ") }) }));
  return lines;
}

/**
 * The swap button of a rotating template: the next turn goes to whoever has the first later
 * turn of someone else, and that one to the next turn's person. None when no such turn is shown.
 */
export function swapButton(template) {
  const turns = template.turns || [];
  const first = turns[0];
  const other = first && turns.slice(1).find((turn) => turn.memberID !== first.memberID);
  if (!template.rotation?.length || !other) return [];
  return [el("button", { type: "button", class: "row-button swap", text: "⇄",
    "aria-label": t("page.more.rotation.swap", { title: template.title, name: first.member ?? t("page.more.rotation.nobody"), other: other.member ?? t("page.more.rotation.nobody") }),
    title: t("page.more.rotation.swap", { title: template.title, name: first.member ?? t("page.more.rotation.nobody"), other: other.member ?? t("page.more.rotation.nobody") }),
    onclick: async () => {
      try { await call("recurring.swap", { template: template.id, first: first.period, second: other.period }); } catch (e) { fail(e); }
      refresh("recurring", "tasks");
    } })];
}

/** The members chosen to take turns in the new repeating task's form, in the list's order. */
export function chosenRotation() {
  return [...$("recurring-rotation").querySelectorAll("input:checked")].map((box) => box.value);
}

/** The form's "takes turns" boxes: one per member, kept checked across redraws (none on a
 * phone: its document has no repeating tasks' form). */
export function drawTakers() {
  const box = document.getElementById("recurring-rotation");
  if (!box) return;
  const members = store.view("household")?.members || [];
  const checked = new Set(chosenRotation());
  box.querySelectorAll("label").forEach((label) => label.remove());
  box.hidden = members.length < 2;
  box.append(...members.map((member) => el("label", {}, el("input", { type: "checkbox", value: member.name, checked: checked.has(member.name) }), member.name)));
}

function renderAway() {
  const spans = store.view("away") || [];
  $("away-list").replaceChildren(...spans.map((span) => el("li", { "data-id": span.id },
    el("span", { class: "grow", text: t("page.more.away.span", { name: span.member, first: formatDay(span.first), last: formatDay(span.last) }) }),
    el("button", { type: "button", class: "row-button", text: t("page.more.away.back"), "aria-label": t("page.more.away.back_named", { name: span.member }),
      onclick: async () => {
        try { await call("away.end", { member: span.member }); } catch (e) { fail(e); }
        refresh("away", "recurring", "tasks");
      } }))));
  const select = $("away-member");
  const chosen = select.value;
  const members = store.view("household")?.members || [];
  select.replaceChildren(...members.map((member) => el("option", { value: member.name, text: member.name })));
  if (members.some((member) => member.name === chosen)) select.value = chosen;
  for (const id of ["away-first", "away-last"]) $(id).min = todayISO();
  drawTakers();
}

function wire() {
  $("away-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const first = $("away-first").value, last = $("away-last").value || first;
    if (!first) return;
    try {
      await call("away.add", { member: $("away-member").value, first, last });
      $("away-first").value = ""; $("away-last").value = "";
    } catch (e) { fail(e); }
    refresh("away", "recurring", "tasks");
  });
}
