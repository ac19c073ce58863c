// Parents' mode: kids' chores that take turns (issue 58). Each selected chore has a chip per
// kid; tapping one adds that kid at the end of the turn order, or takes them out (none: any kid
// does it). Whose turn each day is comes from the agent (`turns`); the page shows it.
import { $, el, t, titleOf, fail, drawRows } from "./ui.js";
import { refresh } from "./page.js";

/** The turn order last sent per chore, until the agent's answer shows it: a second tap before
 * the first one's redraw builds on what the first chose, not on what was drawn. */
const sent = new Map();
/** The rows drawn last (ui.drawRows). */
const rows = new Map();

/** `view`: the kids part's store view (`kids`, `catalogue`); `adult` calls with the PIN. */
export function renderKidTurns({ kids = [], catalogue = [] }, adult) {
  const chores = catalogue.filter((item) => item.selected && item.kind === "chore");
  $("turns-empty").hidden = chores.length > 0 && kids.length > 1;
  for (const item of chores) {
    if (sent.get(item.id)?.join(" ") === (item.rotation || []).map((k) => k.id).join(" ")) sent.delete(item.id);
  }
  // A row that did not change is kept (ui.drawRows): a tap on a chip, or the keyboard's focus
  // on it, survives a live update that redraws the part (a kid added, another chore's turn).
  drawRows($("turns-list"), rows, kids.length > 1 ? chores : [], (item) => {
    const title = titleOf(item);
    return JSON.stringify([item.id, title, item.rotation || [], item.turns || [],
      kids.map((kid) => [kid.id, t("page.parents.turns.kid_label", { kid: kid.name, title })])]);
  }, (item) => {
    const title = titleOf(item);
    const order = (item.rotation || []).map((k) => k.id);
    const now = () => sent.get(item.id) ?? order;
    const set = async (ids) => {
      sent.set(item.id, ids);
      try {
        await adult("kids.rotate", ids.length ? { item: item.id, kids: ids } : { item: item.id, off: true });
      } catch (error) { sent.delete(item.id); fail(error); }
      refresh("kids");
    };
    const chips = kids.map((kid) => el("button", { type: "button", class: "chip", "aria-pressed": String(order.includes(kid.id)),
      text: kid.name, "aria-label": t("page.parents.turns.kid_label", { kid: kid.name, title }),
      onclick: () => { const ids = now(); set(ids.includes(kid.id) ? ids.filter((id) => id !== kid.id) : [...ids, kid.id]); } }));
    const turns = item.turns || [];
    const said = turns.length && turns[0].kid
      ? t("page.parents.turns.today", { kid: turns[0].kid, next: turns.slice(1).map((turn) => turn.kid || "—").join(", ") }) : "";
    return el("li", { "data-id": item.id, class: "turns" }, el("span", { class: "grow", text: title }),
      el("span", { class: "chips" }, ...chips), ...(said ? [el("span", { class: "muted turns-today", text: said })] : []));
  });
}
