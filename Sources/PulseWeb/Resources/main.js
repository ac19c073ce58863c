// House Pulse — the family's page, as ES modules with no build step. main.js signs in,
// loads every part, opens the live feed and wires the tabs; each tab is its own module
// (shopping.js, tasks.js, backlog.js, kids.js, more.js) registering itself with page.js.
import { startSession, onConnection, logout } from "./api.js";
import { $, fail, useCatalogue, translateDocument } from "./ui.js";
import { loadCatalogue } from "./messages.js";
import { tabs, local, store, switchTab, loadAll, wireAll } from "./page.js";
import { connectFeed, closeFeed } from "./feed.js";
import "./household.js";
import "./shopping.js";
import "./tasks.js";
import "./backlog.js";
import "./kids.js";
import { lock as lockParents } from "./parents.js";
import "./more.js";
import "./machines.js";
import "./computer.js";
import "./phones.js";
import { wireCelebrations } from "./celebrate.js";
import { showWelcome, wireWelcome } from "./welcome.js";

let online = true;
function setOnline(now) {
  if (online === now) return;
  online = now;
  $("offline").hidden = now;
}

let hasWords = false;
function signedOut() {
  document.querySelectorAll(".tab").forEach((tab) => { tab.hidden = true; });
  document.querySelector(".tabbar").hidden = true;
  $("signed-out").hidden = false;
  lockParents();
  closeFeed();
  // Not signed in, the agent names no language: the browser's first, if the agent has it.
  if (!hasWords) {
    const first = String((navigator.languages || [navigator.language])[0] || "en").toLowerCase().split("-")[0];
    useLanguage(/^[a-z]{2,8}$/.test(first) ? first : "en");
  }
}

onConnection({ online: setOnline, signedOut });

function wire() {
  for (const name of tabs) $(`t-${name}`).addEventListener("click", () => switchTab(name));
  document.querySelector(".tabbar").addEventListener("keydown", (e) => {
    const i = tabs.indexOf(local.tab);
    if (e.key === "ArrowRight") switchTab(tabs[(i + 1) % tabs.length], true);
    else if (e.key === "ArrowLeft") switchTab(tabs[(i + tabs.length - 1) % tabs.length], true);
    else if (e.key === "Home") switchTab(tabs[0], true);
    else if (e.key === "End") switchTab(tabs[tabs.length - 1], true);
  });
  $("sign-out").addEventListener("click", async () => {
    try { await logout(); } catch { /* signed out anyway */ }
    signedOut();
  });
  window.addEventListener("hashchange", () => switchTab(location.hash.slice(1)));
  wireAll();
  wireCelebrations();
  wireWelcome();
}

// The page's words in `language` (the agent's choice for this page), else in English; then
// the words written in index.html are put in that language too.
async function useLanguage(language) {
  let catalogue = null;
  if (language !== "en") catalogue = await loadCatalogue(language).catch((error) => { console.warn(error); return null; });
  if (!catalogue) catalogue = await loadCatalogue("en").catch((error) => { console.error(error); return null; });
  if (!catalogue) return; // the English written in the page stays
  useCatalogue(catalogue);
  hasWords = true;
  document.documentElement.lang = catalogue.language;
  translateDocument(document);
}

async function start() {
  let session;
  try {
    session = await startSession();
  } catch {
    if (!$("signed-out").hidden) return;
    setOnline(false);
    setTimeout(start, 2000);
    return;
  }
  // The catalogue first: nothing is drawn before the page has its words.
  await useLanguage(session.language || "en");
  store.set("session", session);
  if (session.welcome) { showWelcome(); document.body.dataset.ready = "true"; return; } // no household yet
  // A phone (the LAN listener): the lists and the kids' cards, not this computer's administration.
  if (session.phone) { local.phone = true; document.body.classList.add("phone"); }
  switchTab(location.hash.slice(1) || "shopping");
  await loadAll().catch(fail);
  connectFeed({ online: setOnline, isOnline: () => online, fail });
  document.body.dataset.ready = "true";
}

// A module runs once, after the document is parsed.
wire();
start();
