// A phone's notifications (issue 42): the agent decides them by the desktop's rules (never
// the phone's own member's changes, batched) and sends them on the live stream; here they
// are shown in the page and, once the person allowed it on this phone, as the system's
// notifications through the service worker (Chrome on Android shows none from
// `new Notification`). With no internet there is no push: nothing reaches a closed app.
import { $, t, toast } from "./ui.js";
import { outsideHomeScreen } from "./offline.js";

export function showNotice(notice) {
  toast(notice.body ? `${notice.summary} — ${notice.body}` : notice.summary, { seconds: 6 });
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  navigator.serviceWorker?.ready.then((registration) => registration.showNotification(notice.summary, {
    body: notice.body, tag: `pulse-${notice.replaces ?? notice.id}`, icon: "/icon-192.png",
  })).catch((error) => console.warn(error));
}

/** This browser as `outsideHomeScreen` reads it: its user agent, its touch points, and whether
 * the app was opened from the Home Screen (iOS's `navigator.standalone`, or an installed app's
 * display mode). */
export function device() {
  const standalone = /** @type {{standalone?: boolean}} */ (navigator).standalone === true
    || window.matchMedia("(display-mode: standalone)").matches;
  return { userAgent: navigator.userAgent, maxTouchPoints: navigator.maxTouchPoints, standalone };
}

/** More → "Keep House Pulse on this iPhone": the Home Screen's steps, where they matter; once
 * installed, the browser is asked to keep the app's storage (`navigator.storage.persist`). */
export function wireHomeScreen() {
  const seen = device();
  $("home-screen").hidden = !outsideHomeScreen(seen);
  if (seen.standalone) navigator.storage?.persist?.().catch(() => {});
}

/** More → Notifications on this phone: asked from a tap, as the browsers require. */
export function wireNotices() {
  const render = () => {
    const state = typeof Notification === "undefined" ? "unavailable" : Notification.permission;
    const key = { default: "page.notices.off", granted: "page.notices.granted", denied: "page.notices.denied" }[state]
      || "page.notices.unavailable";
    // Drawn before the page has its words: the key stays on the element, and the words put
    // in the page's language later (translateDocument) replace it.
    $("notices-state").dataset.i18n = key;
    $("notices-state").textContent = t(key);
    $("notices-allow").hidden = state !== "default";
  };
  $("notices-allow").addEventListener("click", async () => {
    try { await Notification.requestPermission(); } finally { render(); }
  });
  render();
}
