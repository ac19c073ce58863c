// House Pulse — the family's page, as ES modules with no build step. main.js signs in,
// loads every part, opens the live feed and wires the tabs; each tab is its own module
// (shopping.js, tasks.js, backlog.js, kids.js, more.js) registering itself with page.js.
import { APIError, startSession, onConnection, logout, useAgent, usingAgent, reaches, renewSession } from "./api.js";
import { $, $$, el, t, fail, toast, useCatalogue, translateDocument, confirmDialog, describe, formatClock, formatMoment } from "./ui.js";
import { loadCatalogue, Catalogue } from "./messages.js";
import { tabs, local, store, switchTab, loadAll, wireAll, register } from "./page.js";
import { connectFeed, closeFeed } from "./feed.js";
import "./household.js";
import "./shopping.js";
import "./tasks.js";
import "./backlog.js";
import "./kids.js";
import "./more.js";
import { wireCelebrations } from "./celebrate.js";
import { restore as restoreOffline, keep, flush, queue, setOffline, keepWords, keptWords, forget, wayBack, keepWayBack, outsideHomeScreen,
  setSource, copyAge } from "./offline.js";
import { wireNotices, wireHomeScreen, device } from "./notices.js";
import { initial, next, banner as bannerOf } from "./connection.js";

// The page's modules are loaded and run: the benchmark's load phases (`pulse-bench --trace`).
performance.mark("pulse-main");
// The page's last uncaught errors, kept for this tab (sessionStorage) where a test reads them
// when a step fails: WebKitGTK's driver cannot read a page's console.
for (const kind of ["error", "unhandledrejection"]) {
  addEventListener(kind, (/** @type {any} */ e) => {
    try {
      const said = JSON.parse(sessionStorage.getItem("pulse-errors") || "[]");
      said.push(String(e.reason?.stack || e.reason || e.error?.stack || e.message));
      sessionStorage.setItem("pulse-errors", JSON.stringify(said.slice(-5)));
    } catch { /* no storage: nothing kept */ }
  });
}

// The computer's own parts — parents' mode, machines, phones, this computer, the welcome — are
// loaded only on a computer's page (plain HTTP on loopback): the phone app (HTTPS, the LAN
// listener) never shows them, and opens faster without a third of the page's bytes.
let desk = null;
function loadDesk() {
  desk ??= Promise.all([import("./parents.js"), import("./welcome.js"), import("./machines.js"), import("./computer.js"), import("./phones.js"), import("./apps.js")])
    .then(([parents, welcome]) => {
      wireAll(); // the parts just registered (each part is wired once)
      welcome.wireWelcome();
      return { lockParents: parents.lock, showWelcome: welcome.showWelcome };
    });
  return desk;
}
if (location.protocol !== "https:") loadDesk();

// The connection (connection.js decides, this carries out): which agent the page uses and
// what it says of it.
/** @type {Readonly<import("./connection.js").State>} */
let connection = initial;
/** Tells the connection what happened; its actions are carried out in order. */
async function dispatch(event) {
  const { state, actions } = next(connection, event);
  connection = state;
  for (const action of actions) await carryOut(action);
}
async function carryOut(action) {
  switch (action.do) {
    case "leave-other": closeFeed(); useAgent(null); break;
    case "banner": banner(); break;
    case "welcome": (await loadDesk()).showWelcome(); document.body.dataset.ready = "true"; break;
    case "household": await showHousehold(action.phone); break;
    case "use-other": await useOther(action.agent); break;
    case "send-queue": sendQueue(); break; // an agent answers again: what waited, once
    case "search": roamOnce(); break; // answered by "found" or "not-found"
    case "retry": startSoon(action.ms); break;
    case "offline-shown": setOffline(true); document.body.dataset.ready = "offline"; break;
    case "queue-offline": setOffline(true); break;
    case "reload-for-new-agents": reloadForNewAgents(); break;
    case "signed-out": signedOut(action.keepWayBack); break;
    default: throw new Error(`connection: unknown action ${action.do}`);
  }
}
const setOnline = (now) => dispatch({ type: "online", now, queued: queue().length > 0 });

// One start at a time, and one waiting.
let startTimer = null;
let starting = false;
function startSoon(ms) {
  clearTimeout(startTimer);
  startTimer = setTimeout(start, ms);
}

/** The banner: no agent in reach, or (a phone) its own at another address or another agent of
 * the household in use (connection.js says which). */
function banner() {
  const said = bannerOf(connection, { evictable: onPhone() && outsideHomeScreen(device()) ? queue().length : 0, copy: onPhone() ? copyAge() : null });
  $("offline").hidden = said.hidden;
  if (said.hidden) return;
  $("offline").classList.toggle("calm", said.calm);
  $("offline").textContent = t(said.key, said.params);
  // How old the phone's list is: "List as of 17:02, from Kitchen PC", on a line of its own.
  const copy = said.copy;
  if (copy) {
    const time = copy.today ? formatClock(copy.at) : formatMoment(copy.at);
    $("offline").append(el("span", { id: "offline-copy", class: "as-of", text: t(copy.key, { time, computer: copy.from || "" }) }));
  }
}

let hasWords = false;
/** The phone app (the LAN listener, HTTPS), whether or not it has a session. */
const onPhone = () => location.protocol === "https:";
/** `keep`: keep the phone's roaming credential for one tap's way back (not when it was signed
 * out on this page: then only pairing brings it back). */
function signedOut(keep) {
  $$(".tab").forEach((tab) => { tab.hidden = true; });
  $$(".tabbar")[0].hidden = true;
  $("signed-out").hidden = false;
  banner(); // none: not "no computer in reach", one answered, and said no
  $("sync-state").textContent = ""; // nothing of the household's state is this browser's now
  desk?.then((parts) => parts.lockParents());
  closeFeed();
  if (onPhone()) {
    // A phone removed from the household, signed out, or unused for too long: what it kept of
    // the household goes; changes it could not send stay (sent if it is added again), said.
    const waiting = queue().length;
    // Signed out by its agent (its cookie expired unused, or a computer removed it): its
    // roaming credential is kept for one tap's way back; signed out here, nothing is.
    keepWayBack(keep ? store.view("session")?.roaming || wayBack() : null);
    forget({ keepQueue: true });
    $("signed-out-renew").hidden = !wayBack();
    document.body.dataset.ready = "signed-out";
    $("signed-out").dataset.phone = "true";
    $("signed-out-queued").hidden = waiting === 0;
    $("signed-out-queued").dataset.count = String(waiting);
  }
  // Not signed in, the agent names no language: the browser's first, if the agent has it.
  if (!hasWords) {
    const first = String((navigator.languages || [navigator.language])[0] || "en").toLowerCase().split("-")[0];
    useLanguage(/^[a-z]{2,8}$/.test(first) ? first : "en").then(signedOutWords);
  } else signedOutWords();
}

/** The signed-out card's words: a phone is told how to be added again, a computer's browser
 * how to open the page signed in. */
function signedOutWords() {
  if (!onPhone()) return;
  for (const [id, key] of [["signed-out-title", "page.signed_out.phone.title"], ["signed-out-text", "page.signed_out.phone.text"]]) {
    $(id).dataset.i18n = key; // the phone's words stay when the page's language changes
    $(id).textContent = t(key);
  }
  const count = Number($("signed-out-queued").dataset.count || 0);
  if (count) $("signed-out-queued").textContent = t("page.signed_out.phone.queued", { count });
}
onConnection({ online: setOnline, signedOut: () => dispatch({ type: "signed-out" }) });

function wire() {
  for (const name of tabs) $(`t-${name}`).addEventListener("click", () => switchTab(name));
  $$(".tabbar")[0].addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    const i = tabs.indexOf(local.tab);
    if (e.key === "ArrowRight") switchTab(tabs[(i + 1) % tabs.length], true);
    else if (e.key === "ArrowLeft") switchTab(tabs[(i + tabs.length - 1) % tabs.length], true);
    else if (e.key === "Home") switchTab(tabs[0], true);
    else if (e.key === "End") switchTab(tabs[tabs.length - 1], true);
  });
  $("sign-out").addEventListener("click", async () => {
    // On a phone, signing out removes the phone from the household (its session is the
    // household's): asked first, in words that say so.
    if (local.phone) {
      const waiting = queue().length;
      const text = t("page.sign_out.phone.text") + (waiting ? " " + t("page.sign_out.phone.queued", { count: waiting }) : "");
      if (!(await confirmDialog(t("page.sign_out.phone.title"), text, t("page.sign_out.phone.ok")))) return;
    }
    try { await logout(); } catch (error) {
      // A phone is removed by the household, so only an agent's answer signs it out: with none,
      // it stays signed in and says so (its copy and its queue kept). A computer's page is
      // signed out anyway (its session is its own agent's, and the cookie goes with the page).
      if (local.phone && !(error instanceof APIError && error.status === 401)) {
        if (error instanceof APIError && error.code === "unreachable") toast(t("page.sign_out.phone.unreachable"), { error: true, seconds: 8 });
        else fail(error);
        return;
      }
    }
    if (local.phone) forget();
    dispatch({ type: "signed-out", here: local.phone });
  });
  // One tap back for a phone whose cookie expired unused: a new one for its roaming credential.
  $("signed-out-renew").addEventListener("click", async () => {
    const credential = wayBack();
    if (!credential) return;
    try {
      if (await renewSession(credential)) {
        keepWayBack(null);
        location.reload(); // signed in: the app starts again with its new cookie
        return;
      }
      keepWayBack(null); // removed from the household: only being added again brings it back
      $("signed-out-renew").hidden = true;
      toast(t("page.signed_out.phone.removed"), { error: true, seconds: 8 });
    } catch (error) { fail(error); }
  });
  window.addEventListener("hashchange", () => switchTab(location.hash.slice(1)));
  wireAll();
  wireCelebrations();
  wireNotices();
  wireHomeScreen();
}

// The page's words in `language` (the agent's choice for this page), else in English; then
// the words written in index.html are put in that language too.
let wordsLanguage = null;
async function useLanguage(language) {
  if (language === wordsLanguage) return; // the page has these words already
  let catalogue = null;
  if (language !== "en") catalogue = await loadCatalogue(language).catch((error) => { console.warn(error); return null; });
  if (!catalogue) catalogue = await loadCatalogue("en").catch((error) => { console.error(error); return null; });
  if (!catalogue) return; // the English written in the page stays
  applyWords(catalogue);
  if (local.phone) keepWords(catalogue);
}

function applyWords(catalogue) {
  useCatalogue(catalogue);
  wordsLanguage = catalogue.language;
  hasWords = true;
  document.documentElement.lang = catalogue.language;
  translateDocument(document);
}

// A phone's changes made while no agent answered, sent in order (offline.js); a change the
// household refused meanwhile (the item was deleted) is said, then everything is reloaded.
let sending = null;
function sendQueue() {
  sending ??= flush().then((refused) => {
    // Said in the reader's words (the refusal's own message), never as a raw code.
    for (const { error } of refused) toast(t("page.offline.refused", { reason: describe(error) }), { error: true, seconds: 6 });
    return loadAll();
  }).catch(fail).finally(() => { sending = null; });
  return sending;
}

// The household is on the screen (from the phone's copy or the agent): the benchmark's load figures.
let shown = false;
function markShown() { if (!shown) { shown = true; performance.mark("pulse-shown"); } }

// The phone app shows what it last saw at once (offline.js), before the agent answers and
// when none does; the agent's answers then replace it.
let shownFromCopy = false;
async function showCopy() {
  if (shownFromCopy) return true;
  if (!restoreOffline(store)) return false;
  shownFromCopy = true;
  local.phone = true;
  document.body.classList.add("phone");
  // The words kept with the copy, at once; else fetched (through the worker).
  const language = store.view("session")?.language || "en";
  const kept = keptWords(language);
  if (kept && language !== wordsLanguage) applyWords(new Catalogue(kept.messages, kept.language));
  else await useLanguage(language);
  switchTab(location.hash.slice(1) || "shopping");
  markShown();
  return true;
}

// A phone's session names the household's agents and its credential for them: kept current as
// they change (a computer turns phones on or off, a removal renews the credential).
async function refreshSession() {
  if (!local.phone || usingAgent()) return;
  store.set("session", await startSession());
}
register({
  id: "agents", topics: [], render() {},
  // After a gap in the feed (a start has just asked for the session itself: not twice).
  async load() { if (!starting) await refreshSession().catch(() => {}); },
  onEvent(event) {
    // A summary (many changes) names only its first change's entity.
    if (event.count > 1 || ["phone_service", "machine_removal"].includes(event.entity)) refreshSession().catch(() => {});
  },
});

// The household's agents this page may connect to: those its policy names (the agent serving
// the page names them). A page kept from before another agent served phones reloads (once a
// minute at most), from the worker's fresher copy, rather than try one its policy forbids.
const connectable = new Set(($$('meta[name="pulse-connect"]')[0]?.content || "").split(" ").filter(Boolean));
function reloadForNewAgents() {
  const last = Number(sessionStorage.getItem("pulse-reloaded") || 0);
  if (Date.now() - last < 60_000) return;
  sessionStorage.setItem("pulse-reloaded", String(Date.now()));
  location.reload();
}

// A phone whose own agent does not answer at this page's address uses it at another (a new
// lease after the phone was paired by address; its `.local` name, which the phone resolves),
// or another agent of the household (the agents, their addresses and the phone's credential
// for them came with its last session). All are asked at once and the first to answer is used:
// a silent one costs its deadline once, not once per address in turn.
let roaming = null;
/** One search for another address or agent at a time (a loss and a start may both ask); its
 * answer goes to the connection once. */
function roamOnce() {
  roaming ??= search()
    .then(({ chosen, unknown }) => dispatch(chosen ? { type: "found", agent: { base: chosen.base, name: chosen.agent.name, self: chosen.agent.self } }
      : { type: "not-found", unknown }))
    .catch(fail).finally(() => { roaming = null; });
  return roaming;
}

/** The first of the household's other addresses and agents to answer (`chosen`), and whether
 * one was left out because this page may not connect to it (`unknown`). */
async function search() {
  const kept = store.view("session");
  if (!kept?.roaming || !Array.isArray(kept.agents)) return { chosen: null, unknown: false };
  let unknown = false;
  const candidates = [];
  for (const agent of kept.agents) {
    for (const base of agent.urls || []) {
      if (base === location.origin) continue; // this page's own address: it did not answer
      if (!connectable.has(base)) { unknown = true; continue; }
      candidates.push({ base, agent });
    }
  }
  const chosen = await new Promise((resolve) => {
    let left = candidates.length;
    if (!left) resolve(null);
    for (const candidate of candidates) {
      reaches(candidate.base, kept.roaming).then((answered) => {
        if (answered) resolve(candidate); else if (--left === 0) resolve(null);
      });
    }
  });
  return { chosen, unknown };
}

/** The household from `agent` (another address or agent: connection.js chose it), with the
 * phone's roaming credential; what waited is sent there. */
async function useOther(agent) {
  closeFeed(); // this page's own agent's, retrying in vain
  useAgent({ ...agent, bearer: store.view("session")?.roaming });
  setSource(agent.name); // the copy kept from now is that computer's
  setOffline(false);
  banner();
  if (queue().length) await sendQueue(); else await loadAll().catch(fail);
  connectFeed({ online: setOnline, isOnline: () => connection.online, fail, lost: () => dispatch({ type: "other-lost" }) });
  document.body.dataset.ready = "roaming";
}

async function start() {
  if (starting) return;
  starting = true;
  try { await begin(); } finally { starting = false; }
}

let subscribed = false;
async function begin() {
  if (navigator.serviceWorker?.controller && await showCopy()) await dispatch({ type: "copy-shown" });
  let session;
  try {
    session = await startSession();
  } catch {
    // A phone that saw its household before opens with it while no agent answers.
    if (connection.mode !== "signed-out" && !connection.via && await showCopy()) await dispatch({ type: "copy-shown" });
    await dispatch({ type: "unanswered" });
    return;
  }
  // The catalogue first: nothing is drawn before the page has its words.
  await useLanguage(session.language || "en");
  store.set("session", session);
  await dispatch({ type: "answered", phone: Boolean(session.phone), welcome: Boolean(session.welcome) });
}

/** The household from this page's own agent. */
async function showHousehold(phone) {
  const session = store.view("session");
  if (!phone) await loadDesk();
  // A phone (the LAN listener): the lists and the kids' cards, not this computer's administration.
  if (phone) {
    local.phone = true;
    document.body.classList.add("phone");
    $("sign-out").dataset.i18n = "page.more.sign_out.phone"; // it removes the phone: said so
    $("sign-out").textContent = t("page.more.sign_out.phone");
    // What was last seen is kept for opening with no network; changes made meanwhile go now.
    if (!subscribed) {
      subscribed = true;
      store.subscribe((part) => {
        keep(store, part);
        if (part === "shopping" && !$("offline").hidden) banner(); // a change queued meanwhile: counted
      });
    }
    keep(store, "session");
    setSource(session?.computer); // the copy kept from now is this computer's
    setOffline(false);
    if (queue().length) { setOffline(true); await sendQueue(); }
  }
  switchTab(location.hash.slice(1) || "shopping");
  await loadAll().catch(fail);
  closeFeed(); // a start after the agent came back: one feed
  connectFeed({ online: setOnline, isOnline: () => connection.online, fail });
  document.body.dataset.ready = "true";
  markShown();
  if (phone) {
    // Installable and offline: the app's files through the service worker, registered once
    // the household is shown (its first caching does not slow the first load).
    navigator.serviceWorker?.register("/sw.js", { type: "module", scope: "/" }).catch((error) => console.warn(error));
    // The page's words for opening offline: fetched once through the worker, which keeps them.
    const warm = () => { for (const words of new Set([session.language || "en", "en"])) fetch(`/messages/${words}.json`).catch(() => {}); };
    // The words kept with the copy, as the agent has them now (for the next start).
    loadCatalogue(session.language || "en").then(keepWords).catch(() => {});
    if (navigator.serviceWorker?.controller) warm(); else navigator.serviceWorker?.addEventListener("controllerchange", warm, { once: true });
  }
}

// A page the browser keeps for going back to it (its back/forward cache) keeps no feed open:
// each kept page's stream would hold one of the six connections a browser makes to one address,
// and a page opened after enough of them would wait on every call. Shown again, it starts afresh.
window.addEventListener("pagehide", (event) => { if (event.persisted) closeFeed(); });
window.addEventListener("pageshow", (event) => { if (event.persisted) start(); });

// A module runs once, after the document is parsed.
wire();
start();
