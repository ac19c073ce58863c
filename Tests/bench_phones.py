"""The phone app's figures for the benchmark (scripts/bench.sh, docs/PERFORMANCE.md), each
beside the same measured on the computer's own loopback page in the same run:

- live update: a change made through the computer's page API → shown on the page (the feed,
  then the list reloaded), on the phone over the LAN listener vs. on the computer's page;
- cold load: navigation → the page shows the household, with no cache, no service worker and
  no copy of what the phone saw;
- warm load: the same with the service worker in control, which shows the phone's copy at once
  (the computer's page: its HTTP cache, then the agent's answers).

The phone is in its own network namespace trusting the household CA (web_phones.py's set-up),
on each engine in turn: Chromium, Firefox ESR, WebKitGTK (web_phone_engines.py's ways of
trusting it); the computer's page is Chromium, measured beside each engine's rounds.
Usage: bench_phones.py BIN HOME [ROUNDS] [ENGINES] (HOME: a household, no agent running; as root;
ENGINES: chromium,firefox,webkit by default). Prints one JSON object: Chromium's figures under
their names, the other engines' prefixed `firefox_`, `webkit_`.
"""
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

from selenium.webdriver.common.by import By

import web_phone_engines
import web_phones as wp
import web_support
from web_support import browser, wait

OBSERVE = """
window.__seen = {};
const list = document.getElementById('shop-list');
new MutationObserver(() => {
  for (const name of list.querySelectorAll('.name')) {
    const text = name.textContent;
    if (text.startsWith('bench-') && !(text in window.__seen)) window.__seen[text] = Date.now();
  }
}).observe(list, { childList: true, subtree: true, characterData: true });
"""

# The moment each bench item is shown marked "added while you were out" (trip.js).
MARKED = """
window.__marked = {};
const shopList = document.getElementById('shop-list');
new MutationObserver(() => {
  for (const mark of shopList.querySelectorAll('.while-out')) {
    const text = mark.closest('li')?.querySelector('.name')?.textContent;
    if (text && text.startsWith('bench-') && !(text in window.__marked)) window.__marked[text] = Date.now();
  }
}).observe(shopList, { childList: true, subtree: true, characterData: true });
"""


# Where a load's time went (`pulse-bench --trace`), in ms from the navigation: the document
# answered and read, parsed, the page's modules run (`pulse-main`: main.js begins), shown.
PHASES = """
const n = performance.getEntriesByType('navigation')[0];
const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN;
return { document: n.responseEnd, parsed: n.domInteractive, modules: at('pulse-main'), shown: at('pulse-shown') };
"""


def ready_ms(driver, phases=None):
    """Navigation → the household shown (from the phone's copy or the agent's answers); its
    phases appended to `phases` when given."""
    wait("the page to show the household", lambda: driver.execute_script("return document.body.dataset.ready === 'true'"), timeout=20)
    if phases is not None:
        phases.append(driver.execute_script(PHASES))
    return driver.execute_script("return performance.getEntriesByName('pulse-shown')[0].startTime")


def medians(phases, kind):
    """`trace_KIND_PHASE`: each phase's median over the loads."""
    found = {phase: [load[phase] for load in phases if load[phase] is not None] for phase in (phases[0] if phases else [])}
    return {f"trace_{kind}_{phase}": statistics.median(values) for phase, values in found.items() if values}


def p(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def forget(engine, phone, d, mine):
    """No HTTP cache, no service worker, no copy of what the phone saw (its cookie kept)."""
    d.get("about:blank")
    if engine == "chromium":
        phone.cdp("Storage.clearDataForOrigin", {"origin": mine, "storageTypes": "service_workers,cache_storage,local_storage"})
        phone.cdp("Network.clearBrowserCache")
        return
    d.get(mine + "/bench-forget")  # the origin's 404, which starts nothing (the worker lets it through): its storage reached from there
    said = d.execute_async_script("""const done = arguments[arguments.length - 1];
      const race = (p, what) => Promise.race([p.then(() => what + ' ok', (e) => what + ' ' + e),
                                              new Promise((r) => setTimeout(() => r(what + ' hung'), 3000))]);
      try { localStorage.clear(); } catch (e) { done('localStorage ' + e); return; }
      Promise.all([race(navigator.serviceWorker.getRegistrations().then((all) => Promise.all(all.map((r) => r.unregister()))), 'workers'),
                   race(caches.keys().then((keys) => Promise.all(keys.map((k) => caches.delete(k)))), 'caches')]).then(done);""")
    if said != ["workers ok", "caches ok"]:
        raise web_support.Failed(f"the phone's storage not cleared: {said}")
    if engine == "firefox":
        phone.clear_http_cache()
    # WebKitGTK's WebDriver cannot clear its HTTP cache: its cold load revalidates the files it
    # kept (the agent's `no-cache`: one request each, answered 304), said beside its figure.
    d.get("about:blank")


def measure(engine, phone, computer, mine, web, rounds):
    """Cold, warm and live on this phone, each round beside the computer's page (Chromium)."""
    d = phone.driver
    tracing = os.environ.get("PULSE_BENCH_TRACE") == "1"
    phases = {kind: [] if tracing else None for kind in ["cold", "cold_base", "warm", "warm_base"]}
    cold, cold_base = [], []
    for _ in range(5):
        forget(engine, phone, d, mine)
        d.get(mine + "/")
        cold.append(ready_ms(d, phases["cold"]))
        computer.execute_cdp_cmd("Network.clearBrowserCache", {})
        computer.get(web + "/")
        cold_base.append(ready_ms(computer, phases["cold_base"]))
    # Warm: the service worker in control (the computer's page: as a browser keeps it).
    wait("the service worker in control", lambda: d.execute_script(
        "return navigator.serviceWorker.controller !== null || (location.reload(), false)"), timeout=20)
    warm, warm_base = [], []
    for _ in range(5):
        d.get("about:blank")  # a navigation each time (a reload may skip the worker: Marionette's, WebKitGTK's)
        d.get(mine + "/")
        warm.append(ready_ms(d, phases["warm"]))
        computer.get(web + "/")
        warm_base.append(ready_ms(computer, phases["warm_base"]))

    # Live: additions through the computer's page API, seen on both pages.
    d.get(mine + "/")
    ready_ms(d)
    computer.get(web + "/")
    ready_ms(computer)
    for driver in (d, computer):
        driver.execute_script(OBSERVE)
    cookie = next(c for c in computer.get_cookies() if c["name"].startswith("pulse_session_"))
    csrf = computer.execute_script("return fetch('/api/session').then(r => r.json()).then(s => s.csrf)")

    def add(name):
        """Adds `name` through the computer's page API; the moment it was sent (Unix ms)."""
        body = json.dumps({"names": [name]}).encode()
        post = urllib.request.Request(f"{web}/api/call/shop.add", data=body, method="POST", headers={
            "Content-Type": "application/json", "Origin": web, "X-Pulse-CSRF": csrf,
            "Cookie": f"{cookie['name']}={cookie['value']}"})
        start = time.time() * 1000
        urllib.request.urlopen(post, timeout=10).read()
        return start

    live, live_base = [], []
    for i in range(rounds):
        name = f"bench-{engine}-{i}"
        start = add(name)
        seen = wait(f"{name} on both pages", lambda: [drv.execute_script(f"return window.__seen['{name}']") for drv in (d, computer)]
                    if all(drv.execute_script(f"return '{name}' in window.__seen") for drv in (d, computer)) else None, timeout=10)[0]
        live.append(seen[0] - start)
        live_base.append(seen[1] - start)

    # Going shopping (issue 57): the phone's reader on a trip; what the computer adds meanwhile
    # is shown on the phone marked "added while you were out" (the computer's page: shown).
    d.find_element(By.ID, "trip-toggle").click()
    wait("the phone's trip started", lambda: d.find_element(By.ID, "trip-toggle").get_attribute("aria-pressed") == "true", timeout=10)
    d.execute_script(MARKED)
    trip, trip_base = [], []
    for i in range(rounds):
        name = f"bench-trip-{engine}-{i}"
        start = add(name)
        seen = wait(f"{name} marked on the phone, shown on the computer's page", lambda: [
            d.execute_script(f"return window.__marked['{name}']"), computer.execute_script(f"return window.__seen['{name}']")]
            if d.execute_script(f"return '{name}' in window.__marked") and computer.execute_script(f"return '{name}' in window.__seen")
            else None, timeout=10)[0]
        trip.append(seen[0] - start)
        trip_base.append(seen[1] - start)
    d.find_element(By.ID, "trip-toggle").click()
    wait("the phone's trip over", lambda: d.find_element(By.ID, "trip-toggle").get_attribute("aria-pressed") == "false", timeout=10)
    traced = {name: value for kind, loads in phases.items() for name, value in medians(loads, kind).items()}
    return traced | {
        "trip_p50": p(trip, 0.5), "trip_p95": p(trip, 0.95), "trip_base_p50": p(trip_base, 0.5), "trip_base_p95": p(trip_base, 0.95),
        "live_p50": p(live, 0.5), "live_p95": p(live, 0.95), "live_base_p50": p(live_base, 0.5), "live_base_p95": p(live_base, 0.95),
        "cold": statistics.median(cold), "cold_base": statistics.median(cold_base),
        "warm": statistics.median(warm), "warm_base": statistics.median(warm_base),
    }


def start_phone(engine, der, pem):
    """The phone's browser of this engine, in its namespace, trusting the household root."""
    if engine == "chromium":
        phone_home = os.path.join(wp.SCRATCH, "phone-home")
        os.makedirs(os.path.join(phone_home, ".pki", "nssdb"))
        wp.sh("certutil", "-d", f"sql:{phone_home}/.pki/nssdb", "-N", "--empty-password")
        wp.sh("certutil", "-d", f"sql:{phone_home}/.pki/nssdb", "-A", "-t", "C,,", "-n", "House Pulse", "-i", der)
        return wp.PhoneBrowser(phone_home, 9815 + wp.OCTET)
    if engine == "firefox":
        return web_support.Firefox(390, 844, namespace=wp.NETS["phone"][0], address=wp.NETS["phone"][4], trust=der)
    return web_phone_engines.WebKitPhone(pem, 4444 + wp.OCTET)


def main():
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    engines = sys.argv[4].split(",") if len(sys.argv) > 4 else ["chromium"] + [
        engine for engine, needs in [("firefox", ["/usr/bin/firefox-esr"]), ("webkit", ["/usr/bin/WebKitWebDriver", "/usr/bin/Xvfb"])]
        if all(os.access(path, os.X_OK) for path in needs)]
    wp.configure(sys.argv[1], sys.argv[2])
    wp.namespaces()
    agent = web_support.Agent(wp.BIN, wp.HOME, "--web", "127.0.0.1:0")
    wp.cleanups.append(agent.stop)
    agent.event("ready")
    port = wp.cli_json("phones", "on", "--port", "0")["port"]
    mine = f"https://{wp.AGENT_FOR_PHONE}:{port}"
    der, pem = os.path.join(wp.SCRATCH, "root.der"), os.path.join(wp.SCRATCH, "root.pem")
    with open(der, "wb") as f:
        f.write(urllib.request.urlopen(f"http://{wp.AGENT_FOR_PHONE}:{port}/ca.crt", timeout=10).read())
    wp.sh("openssl", "x509", "-inform", "der", "-in", der, "-out", pem)
    computer = browser(390, 844)
    wp.cleanups.append(computer.quit)
    wp.signed_in_page(computer, wp.HOME)
    web = computer.current_url.split("/#")[0].rstrip("/")
    figures = {"rounds": rounds}
    for engine in engines:
        phone = None
        try:
            phone = start_phone(engine, der, pem)
            web_phone_engines.pair(phone.driver, f"Bench {engine}", "Anna")  # its service worker in control before the rounds
            measured = measure(engine, phone, computer, mine, web, rounds)
        except Exception as error:
            if engine == "chromium":
                raise
            print(f"{engine}: not measured: {error}", file=sys.stderr)  # Chromium's figures are still said
            continue
        finally:
            if phone:
                phone.quit()
        prefix = "" if engine == "chromium" else engine + "_"
        figures.update({prefix + key: value for key, value in measured.items()})
    print(json.dumps(figures))


if __name__ == "__main__":
    try:
        main()
    finally:
        wp.cleanup()
