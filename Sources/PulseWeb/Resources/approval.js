// Chores a kid reports and a parent approves (issue 58, item 4). On the kid's view (no PIN): a
// chore that waits for a parent (`approval` in the agent's catalogue answer) is reported at a
// tap, shows as waiting (`waiting`), and the kid sees what became of it — approved with the
// seeds' "Great job!", or declined with the parent's word. In parents' mode (PIN): the reports
// that wait, each approved or declined, and the household's setting. Which chores wait, and
// what a report's status is, are the agent's answers; the page shows them.
import { call } from "./api.js";
import { $, el, t, titleOf, fail, toast, formatDay } from "./ui.js";
import { refresh } from "./page.js";
import { celebrationsOn, greatJob } from "./celebrate.js";

/** Each report's status when last shown: an approval is celebrated once, when the kid sees it. */
const seen = new Map();

/** A kid tapped a chore that waits for a parent. */
export async function reportChore(kid, item) {
  try {
    await call("kids.report", { kid: kid.id, item: item.id });
    toast(t("page.kids.report.sent", { title: titleOf(item) }), { seconds: 4 });
  } catch (error) { fail(error); }
  refresh("kids");
}

/** The kid's reports of this week under their chores: waiting, approved or declined. */
export function renderKidReports(kid, reports) {
  const mine = kid ? reports.filter((r) => r.kid === kid.id) : [];
  $("kid-reports").hidden = mine.length === 0;
  $("kid-reports-list").replaceChildren(...[...mine].reverse().map((report) => {
    const title = titleOf(report);
    const params = { title, peanuts: report.peanuts, word: report.word || "", by: report.decidedBy || "" };
    const key = report.status === "approved" ? "page.kids.report.approved"
      : report.status === "declined" ? (report.word ? "page.kids.report.declined_word" : "page.kids.report.declined")
        : "page.kids.report.waiting";
    return el("li", { class: `report ${report.status}`, "data-id": report.id, "data-status": report.status }, t(key, params));
  }));
  for (const report of mine) {
    const before = seen.get(report.id);
    seen.set(report.id, report.status);
    if (before === "waiting" && report.status === "approved" && report.outcome === "counted" && celebrationsOn()) {
      greatJob(t("page.kids.earned", { peanuts: report.peanuts }));
    }
  }
}

/** Parents' mode: the setting, and the reports that wait (`adult` calls with the PIN). */
export function renderApprovals(reports, on, adult) {
  const setting = $("approval-setting");
  setting.checked = on;
  setting.onchange = async () => {
    try { await adult("kids.approval.set", { value: setting.checked ? "on" : "off" }); } catch (error) { fail(error); }
    refresh("kids");
  };
  const waiting = reports.filter((r) => r.status === "waiting");
  $("approval-empty").hidden = waiting.length > 0;
  $("approval-list").replaceChildren(...waiting.map((report) => {
    const title = titleOf(report);
    const names = { kid: report.kidName, title };
    const word = el("input", { maxlength: "180", class: "grow", placeholder: t("page.parents.approval.word", names),
      "aria-label": t("page.parents.approval.word", names) });
    const decide = async (method, params, done) => {
      try {
        await adult(method, { report: report.id, ...params });
        done();
      } catch (error) { fail(error); }
      refresh("kids");
    };
    return el("li", { "data-id": report.id, class: "approval" },
      el("span", { class: "grow", text: t("page.parents.approval.row", { ...names, peanuts: report.peanuts, day: formatDay(report.day) }) }),
      el("span", { class: "row" }, word,
        el("button", { type: "button", class: "approve", text: t("page.parents.approval.approve"),
          "aria-label": t("page.parents.approval.approve_label", names),
          onclick: () => decide("kids.approve", {}, () => {
            if (celebrationsOn()) greatJob(t("page.kids.earned", { peanuts: report.peanuts }));
            else toast(t("page.parents.approval.approved", names), { seconds: 3 });
          }) }),
        el("button", { type: "button", class: "plain decline", text: t("page.parents.approval.decline"),
          "aria-label": t("page.parents.approval.decline_label", names),
          onclick: () => decide("kids.decline", word.value.trim() ? { word: word.value.trim() } : {},
            () => toast(t("page.parents.approval.declined", names), { seconds: 3 })) })));
  }));
}
