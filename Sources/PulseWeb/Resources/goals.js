// A kid's savings goal (issue 58, item 2): what they save for, how far they are ("12 of 20
// peanuts"), the seeds' "Great job!" the moment it is reached (from whichever computer or
// phone the last peanuts came), choosing a reward to save for and giving up on it. What is kept
// for the goal and when it is reached are the agent's (`kid.goal`); the page shows them.
import { call } from "./api.js";
import { $, el, t, titleOf, fail, toast } from "./ui.js";
import { refresh } from "./page.js";
import { celebrationsOn, greatJob } from "./celebrate.js";

/** Whether each goal was reached when last shown: its reaching is celebrated once, when seen. */
const wasReached = new Map();

/** The goal area of the kid shown (`kid` from kids.list; `rewards`: the selected ones). */
export function renderGoal(kid, rewards) {
  const box = $("kid-goal");
  box.hidden = !kid;
  if (!kid) return;
  const goal = kid.goal;
  if (!goal) {
    const choices = rewards.filter((r) => r.selected && r.kind === "reward");
    box.hidden = choices.length === 0;
    const select = el("select", { id: "goal-reward", "aria-label": t("page.kids.goal.set") },
      ...choices.map((r) => el("option", { value: r.id, text: t("page.kids.reward.label", { title: titleOf(r), peanuts: r.peanuts }) })));
    box.replaceChildren(el("div", { class: "row" }, select, el("button", { type: "button", class: "plain", text: t("page.kids.goal.set"),
      onclick: () => choose(kid, select.value, choices.find((r) => r.id === select.value)) })));
    return;
  }
  const title = titleOf(goal);
  const words = goal.reached ? t("page.kids.goal.reached", { title }) : t("page.kids.goal.saving", { title, saved: goal.saved, peanuts: goal.peanuts });
  box.replaceChildren(
    el("div", { class: "row" }, el("span", { class: "grow", text: words }),
      el("button", { type: "button", class: "plain", text: t("page.kids.goal.cancel"), "aria-label": t("page.kids.goal.cancel_label", { title }),
        onclick: () => cancel(kid) })),
    el("progress", { max: String(goal.peanuts), value: String(goal.saved), "aria-label": words }));
  const before = wasReached.get(goal.id);
  wasReached.set(goal.id, goal.reached);
  if (goal.reached && before === false && celebrationsOn()) greatJob(t("page.kids.goal.reached", { title }));
}

async function choose(kid, reward, item) {
  if (!reward) return;
  try {
    await call("kids.goal.set", { kid: kid.id, reward });
    toast(t("page.kids.goal.chosen", { kid: kid.name, title: item ? titleOf(item) : "" }), { seconds: 3 });
  } catch (error) { fail(error); }
  refresh("kids");
}

async function cancel(kid) {
  try { await call("kids.goal.cancel", { kid: kid.id }); } catch (error) { fail(error); }
  refresh("kids");
}
