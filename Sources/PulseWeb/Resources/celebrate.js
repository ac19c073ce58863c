// The seeds' success moments (Mindful Home, "Feedback"): a kid's rule or chore → the
// "Great job!" half-sheet that goes by itself after about a second; a reward → confetti
// and "Enjoy your reward!" for two seconds; every task done → a small moment in Tasks.
// Only while Celebrations is on; with `prefers-reduced-motion` the words come without
// the motion (app.css stops every animation, so no confetti falls).
import { $, el, t } from "./ui.js";
import { store } from "./page.js";

/** Whether this computer's Celebrations setting is on (the household's settings say). */
export function celebrationsOn() { return store.view("household")?.settings?.celebrations !== false; }

const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

let sheetTimer = null;
/** The half-sheet: `headline` and a line under it; a tap or any key closes it early. */
export function greatJob(detail) {
  const sheet = $("celebration");
  $("celebration-headline").textContent = t("page.kids.great_job");
  $("celebration-detail").textContent = detail;
  sheet.hidden = false;
  clearTimeout(sheetTimer);
  sheetTimer = setTimeout(() => { sheet.hidden = true; }, 1200);
}

let confettiTimer = null;
const colours = ["#7FAD98", "#D78C28", "#7F9BAD", "#E4572E", "#F3B61F", "#4C9AFF"];
/** Full-screen confetti with "Enjoy your reward!"; pieces are drawn only when motion is welcome. */
export function confetti() {
  const overlay = $("confetti");
  $("confetti-headline").textContent = t("page.kids.redeemed");
  const pieces = [];
  if (!reducedMotion.matches) {
    for (let i = 0; i < 90; i++) {
      const piece = el("i");
      // Through the CSSOM: the page's policy allows no inline style attributes.
      piece.style.left = `${Math.random() * 100}vw`;
      piece.style.background = colours[i % colours.length];
      piece.style.animationDelay = `${Math.random() * 0.5}s`;
      piece.style.animationDuration = `${1.3 + Math.random() * 0.8}s`;
      pieces.push(piece);
    }
  }
  $("confetti-pieces").replaceChildren(...pieces);
  overlay.hidden = false;
  clearTimeout(confettiTimer);
  confettiTimer = setTimeout(() => { overlay.hidden = true; $("confetti-pieces").replaceChildren(); }, 2000);
}

let doneTimer = null;
/** Every active task done: "All done ✓" beside the title, for a moment. */
export function allTasksDone() {
  const chip = $("tasks-all-done");
  chip.hidden = false;
  clearTimeout(doneTimer);
  doneTimer = setTimeout(() => { chip.hidden = true; }, 2400);
}

export function wireCelebrations() {
  const close = () => { $("celebration").hidden = true; $("confetti").hidden = true; };
  $("celebration").addEventListener("click", close);
  $("confetti").addEventListener("click", close);
  // Any key ends it: a celebration covers the page, and a key (Tab) would move the focus under it.
  document.addEventListener("keydown", close);
}
