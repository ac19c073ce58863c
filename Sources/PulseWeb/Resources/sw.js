// The phone app's service worker (issue 42; registered on a phone's page only): the app's
// files come from a cache, so the page opens with no network and at once. The agent serves
// this file with CACHE naming the version of its page (a hash of its files): an upgraded
// agent's worker differs, so the browser installs it, which fetches the new files and drops
// the old cache. The message catalogues are refreshed behind (a home may edit its own). The
// API is never cached: the page keeps its own copy of what it last saw and queues changes
// (offline.js). Notifications: the page asks this worker to show them (Chrome on Android
// shows none from `new Notification`), and a tap brings the app forward.
const CACHE = "house-pulse-version";
/** The page's modules: the agent serves this file with the paths of the modules it serves in
 * place of this placeholder (`WebAssets.serviceWorker`), so that the two lists never differ. */
const MODULES = ["/house-pulse-modules.js"];
/** The app's files. */
export const SHELL = [
  "/", "/app.css", "/icon.svg", "/icon-192.png", "/icon-512.png", "/manifest.webmanifest", ...MODULES,
];

/** Whether a request is one of the app's files (or a message catalogue), not the API. */
export function cacheable(url, method, origin) {
  return method === "GET" && url.origin === origin && !url.pathname.startsWith("/api/") && url.pathname !== "/pair"
    && !url.pathname.startsWith("/ca") && !url.pathname.startsWith("/login");
}

/** The cache, opened once per start of the worker (not once per request). */
let cacheOpened = null;
const opened = () => (cacheOpened ??= caches.open(CACHE));

/** This worker's global scope (a service worker's: the checker's library calls it a worker's). */
const worker = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (typeof self === "undefined" ? null : self));

if (worker && typeof worker.addEventListener === "function" && !("document" in globalThis)) {
  worker.addEventListener("install", (event) => {
    // Where the browser can (Chrome's static routing), the app's files come straight from the
    // cache, without waking this worker for each of them: a warm start is that much faster.
    // (Newer than the checker's library: untyped.)
    const routing = /** @type {any} */ (event);
    const URLPattern = /** @type {any} */ (globalThis).URLPattern;
    if (routing.addRoutes && typeof URLPattern === "function") {
      const paths = SHELL.filter((path) => path !== "/");
      event.waitUntil(routing.addRoutes(paths.map((pathname) => ({
        condition: { urlPattern: new URLPattern({ pathname }) }, source: { cacheName: CACHE },
      }))).catch(() => {}));
    }
    event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => worker.skipWaiting()));
  });
  worker.addEventListener("activate", (event) => {
    event.waitUntil(caches.keys()
      .then((keys) => Promise.all(keys.filter((key) => key !== CACHE).map((key) => caches.delete(key))))
      .then(() => worker.clients.claim()));
  });
  worker.addEventListener("fetch", (event) => {
    const url = new URL(event.request.url);
    if (!cacheable(url, event.request.method, worker.location.origin)) return; // the network, as it is
    const key = url.pathname === "/index.html" ? "/" : url.pathname;
    // Refreshed behind: the catalogues, and the page itself, whose headers name the household's
    // other agents the app may reach (they change as computers turn phones on).
    const refreshBehind = url.pathname.startsWith("/messages/") || key === "/";
    event.respondWith(opened().then(async (cache) => {
      const cached = await cache.match(key);
      if (cached && !refreshBehind) return cached;
      const fresh = fetch(event.request).then((response) => {
        if (response.ok) cache.put(key, response.clone());
        return response;
      });
      if (cached) { event.waitUntil(fresh.catch(() => {})); return cached; }
      return fresh;
    }));
  });
  worker.addEventListener("notificationclick", (event) => {
    event.notification.close();
    event.waitUntil(worker.clients.matchAll({ type: "window" }).then((windows) =>
      windows.length ? windows[0].focus() : worker.clients.openWindow("/")));
  });
}
