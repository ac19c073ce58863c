// Parents' mode: kids' chores that take turns (issue 58). Each selected chore has a chip per
// kid; tapping one adds that kid at the end of the turn order, or takes them out (none: any kid
// does it). Whose turn each day is comes from the agent (`turns`); the page shows it.
import { $, el, t, titleOf, fail } from "./ui.js";
import { refresh } from "./page.js";

/** `view`: the kids part's store view (`kids`, `catalogue`); `adult` calls with the PIN. */
export function renderKidTurns({ kids = [], catalogue = [] }, adult) {
  const chores = catalogue.filter((item) => item.selected && item.kind === "chore");
  $("turns-empty").hidden = chores.length > 0 && kids.length > 1;
  $("turns-list").replaceChildren(...(kids.length > 1 ? chores : []).map((item) => {
    const title = titleOf(item);
    const order = (item.rotation || []).map((k) => k.id);
    const set = async (ids) => {
      try {
        await adult("kids.rotate", ids.length ? { item: item.id, kids: ids } : { item: item.id, off: true });
      } catch (error) { fail(error); }
      refresh("kids");
    };
    const chips = kids.map((kid) => el("button", { type: "button", class: "chip", "aria-pressed": String(order.includes(kid.id)),
      text: kid.name, "aria-label": t("page.parents.turns.kid_label", { kid: kid.name, title }),
      onclick: () => set(order.includes(kid.id) ? order.filter((id) => id !== kid.id) : [...order, kid.id]) }));
    const turns = item.turns || [];
    const said = turns.length && turns[0].kid
      ? t("page.parents.turns.today", { kid: turns[0].kid, next: turns.slice(1).map((turn) => turn.kid || "—").join(", ") }) : "";
    return el("li", { "data-id": item.id, class: "turns" }, el("span", { class: "grow", text: title }),
      el("span", { class: "chips" }, ...chips), ...(said ? [el("span", { class: "muted turns-today", text: said })] : []));
  }));
}
