"""The phone app on three browser engines (issues 51 and 56): Chromium (the NSS database of its
own), WebKitGTK (Safari's engine family; it trusts the system's CA bundle, so it runs in a
private mount namespace where that bundle holds the household root too) and Firefox ESR (its
profile's own NSS database), each in the phone's own network namespace. On each engine:

- the CA page (step one, plain HTTP) shows the fingerprint the computer shows;
- the phone is paired by the link its QR code holds (zbarimg reads the code `phones add` made),
  and the computer approves it;
- four sequences of offline taps on one name, each applied once as meant: the household's
  starting state is made with the CLI, both computers are cut off from the phone (connections
  reset), the page is opened offline from its service worker and the taps are made on what it
  shows; then the computers are reachable again and the list and the pool must be what the
  person meant, with nothing refused;
- roaming: its own computer's agent frozen (a computer asleep), the phone says so and uses the
  other computer (its roaming credential), a change sent there at once and the other's shown
  live; back on its own computer when it wakes;
- axe-core (WCAG 2.0/2.1/2.2 A and AA) on the app online, offline and roaming, light and dark.

Usage: web_phone_engines.py BIN HOME_A HOME_B [SHOTS]   (two computers of one household, no
agent running; root).
Prints `ok …` per check, `FAILED: …` per failed check (the others still run); exit 1 if any.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import web_phones as phones
import web_support
from web_support import Failed, check, failures, ok, wait


# [what, the household before (list, pool), the taps, the list and the pool meant]
SEQUENCES = [
    ("in the pool: add it, check it", ([], ["NAME"]), ["add", "check"], ([], ["NAME"])),
    ("on the list: check it, add it again, check it", (["NAME"], []), ["check", "add", "check"], ([], ["NAME"])),
    ("new: add it, check it, restock it", ([], []), ["add", "check", "restock"], (["NAME"], [])),
    ("in the pool: restock it, check it", ([], ["NAME"]), ["restock", "check"], ([], ["NAME"])),
]


class WebKitPhone:
    """WebKitGTK's WebDriver in the phone's namespace, under Xvfb, trusting the system bundle
    plus the household root (bind-mounted over the bundle in its own mount namespace)."""

    def __init__(self, root_pem, port):
        bundle = os.path.join(phones.SCRATCH, "bundle.crt")
        with open("/etc/ssl/certs/ca-certificates.crt") as system, open(root_pem) as root, open(bundle, "w") as out:
            out.write(system.read() + root.read())
        display = f":{100 + phones.OCTET}"
        script = (f"mount --bind {bundle} /etc/ssl/certs/ca-certificates.crt\n"
                  f"Xvfb {display} -screen 0 390x844x24 -nolisten tcp >/dev/null 2>&1 &\n"
                  f"export DISPLAY={display} HOME={phones.SCRATCH}/webkit-home\n"
                  f"mkdir -p $HOME\n"
                  f"exec WebKitWebDriver --host={phones.NETS['phone'][4]} --port={port}\n")
        self.process = subprocess.Popen(["ip", "netns", "exec", phones.NETS["phone"][0], "unshare", "-m", "--propagation", "private",
                                         "bash", "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        address = (phones.NETS["phone"][4], port)
        wait("WebKitWebDriver", lambda: socket.create_connection(address, timeout=1).close() or True, timeout=20)
        self.driver = webdriver.Remote(command_executor=f"http://{address[0]}:{port}", options=webdriver.WebKitGTKOptions())
        self.driver.set_window_size(390, 844)  # a phone's width, as the Chromium phone's

    def quit(self):
        try:
            self.driver.quit()
        finally:
            # The driver and its Xvfb (one process group): they may not heed SIGTERM.
            for sent in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.process.pid, sent)
                    self.process.wait(timeout=5)
                    break
                except ProcessLookupError:
                    break
                except subprocess.TimeoutExpired:
                    continue


def accessible(driver, state):
    """axe-core on the app as it is now, at the phone's width, light and dark: no violation; and
    nothing of it scrolls sideways or is cut (WCAG's reflow: the banner once reached past both
    edges of a phone's screen)."""
    out = web_support.overflowing(driver)
    if out:
        raise Failed(f"the app {state} does not fit the phone's screen: {out[:5]}")
    was = driver.execute_script("return document.documentElement.dataset.appearance")
    try:
        for appearance in ["light", "dark"]:
            driver.execute_script("document.documentElement.dataset.appearance = arguments[0]", appearance)
            found = web_support.axe_violations(driver)
            if found:
                raise Failed(f"axe-core on the app {state} ({appearance}): {found}")
    finally:
        driver.execute_script("document.documentElement.dataset.appearance = arguments[0]", was)


def ca_page(driver, setup, fingerprint):
    """Step one on the phone: the CA's page over plain HTTP shows the computer's fingerprint."""
    driver.get(setup)
    wait("the CA's page", lambda: driver.find_element(By.CSS_SELECTOR, "code.fingerprint").text == fingerprint, timeout=15)


def pair(driver, name, member=None):
    """Step two: the link the pairing QR code holds (as the phone's camera reads it), approved
    (`member`: whose phone it is)."""
    invitation = phones.cli_json("phones", "add", name, "--host", phones.AGENT_FOR_PHONE, *(["--member", member] if member else []))
    link = phones.decode_qr(invitation["pairQR"], "pair-" + name.split()[0].lower())
    if link != invitation["pair"]:
        raise Failed(f"the pairing QR code reads {link!r}, not the link {invitation['pair']!r}")
    driver.get(link)
    try:
        request = wait("the phone asking", lambda: next((r for r in phones.cli_json("phones").get("requests", []) if r["name"] == name), None),
                       timeout=15)[0]
    except Failed:
        raise Failed(f"the phone did not ask: at {driver.current_url}, "
                     f"{driver.execute_script('return [document.title, document.body && document.body.innerText.slice(0, 300)]')}")
    phones.cli("phones", "approve", request["id"])
    try:
        wait("the phone's page", lambda: driver.execute_script("return document.body.dataset.ready") == "true", timeout=30)
    except Failed:
        state = driver.execute_script("return [document.body.dataset.ready, document.getElementById('toast-text').textContent, "
                                      "performance.getEntriesByType('resource').map(e => e.name.split('/').pop() + ' ' + Math.round(e.duration))]")
        raise Failed(f"the phone's page did not open: at {driver.current_url}, {state}")
    wait("the service worker active", lambda: driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; navigator.serviceWorker.getRegistration().then((r) => done(!!(r && r.active)), () => done(false))"),
        timeout=30)
    wait("the app's files in the worker's cache", lambda: driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; caches.keys().then((keys) => Promise.all(keys.map((k) => caches.open(k).then((c) => c.match('/')))))"
        ".then((found) => done(found.some(Boolean)), () => done(false))"), timeout=30)
    # The next load is the worker's: the app closed and opened again (a navigation; Firefox's
    # Marionette reload, as WebKitGTK's, may skip the worker as a forced reload does).
    page = driver.current_url.split("#")[0]
    driver.get("about:blank")
    driver.get(page)
    wait("the page again, under its service worker", lambda: driver.execute_script(
        "return document.body.dataset.ready === 'true' && navigator.serviceWorker.controller !== null"), timeout=20)


def cut(ports, on):
    """The phone's connections to both computers' phone listeners reset (or no longer)."""
    if on:
        rules = "".join(f"  ip daddr {phones.AGENT_FOR_PHONE} tcp dport {port} reject with tcp reset\n" for port in ports)
        phones.in_namespace("phone", "nft", "-f", "-", input=(
            "table inet cut {\n chain out {\n  type filter hook output priority 0;\n" + rules + " }\n}\n"))
    else:
        phones.in_namespace("phone", "nft", "delete", "table", "inet", "cut", check=False)


def listed():
    items = json.loads(phones.cli("shop", "list", "--json"))
    pool = json.loads(phones.cli("shop", "list", "--restock", "--json"))
    return [i["name"] for i in items], [i["name"] for i in pool]


def text(element):
    """An element's text content (WebKitGTK's WebDriver leaves a role="button" span's words out
    of an element's rendered text, though they are drawn: seen in its screenshots)."""
    return element.get_attribute("textContent")


def press(driver, what, find):
    """Finds and presses an element, again if the list was drawn anew meanwhile (a stale row)."""
    wait(what, lambda: phones.press(driver, find()) or True, timeout=10)


def tap(driver, verb, name):
    if verb == "add":
        phones.press(driver, driver.find_element(By.ID, "add-item"))
        field = wait("the rapid-entry row", lambda: driver.find_element(By.CSS_SELECTOR, "#shop-rapid input.rapid"))[0]
        field.send_keys(name, Keys.ENTER)
        field = wait("the next row", lambda: driver.find_element(By.CSS_SELECTOR, "#shop-rapid input.rapid"))[0]
        field.send_keys(Keys.ENTER)
        wait(f"{name} on the list", lambda: any(name in text(e) for e in driver.find_elements(By.CSS_SELECTOR, "#shop-list li")))
    elif verb == "check":
        # The page takes a checked row off at once (its guess): a row still there a second after
        # its press, with nothing queued by it, was drawn anew under the press (the list redrawn
        # as the app settles, seen on WebKitGTK on a loaded machine) and is pressed again. A
        # press the page took (the queue grew) is never repeated: the queue holds one change per
        # tap (a repeat on a loaded machine, the row not yet drawn off, made one too many).
        pressed = [None, 0]

        def queued():
            return len(json.loads(driver.execute_script("return localStorage.getItem('house-pulse-queue-1') || '[]'")))

        def checked():
            rows = [e for e in driver.find_elements(By.CSS_SELECTOR, "#shop-list li") if name in text(e)]
            if not rows or (pressed[0] is not None and queued() > pressed[1]):
                return True
            if pressed[0] is None or time.monotonic() - pressed[0] > 1.0:
                pressed[1] = queued()
                phones.press(driver, rows[0].find_element(By.CSS_SELECTOR, ".check"))
                pressed[0] = time.monotonic()
            return False
        wait(f"{name} checked (queued, or off the list)", checked, timeout=15)
    else:
        # The toggle shows once the pool is drawn (after an offline start, a moment later on a
        # loaded machine): pressed when it shows and the sheet is closed, again only if a
        # second went by with the sheet still closed (a press is never undone by the next).
        pressed = [None]

        def pool_open():
            if driver.execute_script("return !document.getElementById('restock-sheet').hidden"):
                return True
            toggle = driver.find_element(By.ID, "restock-toggle")
            if toggle.is_displayed() and (pressed[0] is None or time.monotonic() - pressed[0] > 1.0):
                phones.press(driver, toggle)
                pressed[0] = time.monotonic()
            return False
        wait("the restock pool open", pool_open, timeout=15)
        press(driver, f"restocking {name}", lambda: next(e for e in driver.find_elements(By.CSS_SELECTOR, "#restock-list li")
                                                         if name in text(e)).find_element(By.CSS_SELECTOR, ".restock"))
        wait(f"{name} on the list", lambda: any(name in text(e) for e in driver.find_elements(By.CSS_SELECTOR, "#shop-list li")))


def sequences(engine, driver, ports):
    for n, (what, (on_list, in_pool), taps, (meant_list, meant_pool)) in enumerate(SEQUENCES):
        name = f"{engine[:3]}{n}Oats"

        def one():
            for _ in on_list + in_pool:
                phones.cli("shop", "add", name)
            for _ in in_pool:
                phones.cli("shop", "check", name)
            def copied():
                shopping = json.loads(driver.execute_script("return localStorage.getItem('house-pulse-snapshot-1')"))["shopping"]
                return ([x["name"] for x in shopping["list"] if x["name"] == name], [x["name"] for x in shopping["pool"] if x["name"] == name]) \
                    == (on_list and [name], in_pool and [name])
            wait("the phone's copy up to date", copied, timeout=10)
            cut(ports, True)
            try:
                # The app closed and opened again (a navigation: WebKit's WebDriver reload may
                # skip the service worker, as a forced reload does).
                page = driver.current_url.split("#")[0]
                driver.get("about:blank")
                driver.get(page)
                wait("the page offline", lambda: driver.execute_script("return document.body.dataset.ready") == "offline", timeout=25)
                for verb in taps:
                    tap(driver, verb, name)
                wait("every tap queued", lambda: len(json.loads(driver.execute_script(
                    "return localStorage.getItem('house-pulse-queue-1') || '[]'"))) == len(taps), timeout=10)
                if n == 0:
                    accessible(driver, "offline")
            finally:
                cut(ports, False)
            wait("the queue sent", lambda: driver.execute_script(
                "return document.body.dataset.ready === 'true' && (localStorage.getItem('house-pulse-queue-1') || '[]') === '[]'"),
                timeout=25)
            want = (meant_list and [name], meant_pool and [name])
            got = wait("the household as meant", lambda: (lambda lists: lists if ([x for x in lists[0] if x == name],
                                                                                  [x for x in lists[1] if x == name]) == want else None)(listed()),
                       timeout=10)[0]
            said = driver.find_element(By.ID, "toast-text").text if driver.find_element(By.ID, "toast").is_displayed() else ""
            if "was not made" in said:
                raise Failed(f"a refusal was said: {said!r}")
            ok(f"{engine}: offline, {what.replace('it', name, 1)} ({' → '.join(taps)}): applied once as meant "
               f"(list {[x for x in got[0] if x == name]}, pool {[x for x in got[1] if x == name]})")
        def shown_on_failure():
            try:
                one()
            except Exception:
                phones.shot(driver, f"failed-{engine.lower()}-{n}")
                print(f"  the page then: {page_state(driver)}", flush=True)
                raise
        check(f"{engine}: {what}", shown_on_failure)


def page_state(driver):
    """What the page was doing (said when a step fails): its address, its state, its banner, its
    last uncaught errors, its service worker, its queue, the keys of what it keeps and the fields
    of each part of its copy (never their values: the session holds the phone's credentials), and
    the items it shows beside those of its copy. Each read on its own: one that throws says so."""
    try:
        return driver.execute_script("""const safe = (f) => { try { return f(); } catch (e) { return 'threw: ' + e; } };
          const banner = document.getElementById('offline');
          return {url: location.href, ready: safe(() => document.body.dataset.ready), banner: safe(() => banner && !banner.hidden ? banner.textContent : null),
                  errors: safe(() => sessionStorage.getItem('pulse-errors')),
                  kept: safe(() => Object.keys(localStorage).join(',')),
                  shape: safe(() => ((c) => Object.fromEntries(Object.entries(c).map(([part, v]) => [part, v && typeof v === 'object'
                    ? Object.keys(v).join(',') : typeof v])))(JSON.parse(localStorage.getItem('house-pulse-snapshot-1') || '{}'))),
                  worker: safe(() => navigator.serviceWorker ? (navigator.serviceWorker.controller ? 'in control' : 'none') : 'unsupported'),
                  queued: safe(() => JSON.parse(localStorage.getItem('house-pulse-queue-1') || '[]').length),
                  online: navigator.onLine,
                  shown: safe(() => ({list: [...document.querySelectorAll('#shop-list li .name')].map((e) => e.textContent).slice(-8),
                          pool: [...document.querySelectorAll('#restock-list li .name')].map((e) => e.textContent).slice(0, 8),
                          poolOpen: !document.getElementById('restock-sheet').hidden})),
                  copy: safe(() => ((s) => s && {list: s.list.map((x) => x.name).slice(-8), pool: s.pool.map((x) => x.name).slice(0, 8)})(
                    JSON.parse(localStorage.getItem('house-pulse-snapshot-1') || '{}').shopping))};""")
    except Exception as error:  # no script on the page (an error page): what the browser says
        try:
            return f"no script ({type(error).__name__}); {driver.current_url}: {driver.find_element(By.TAG_NAME, 'body').text[:300]!r}"
        except Exception as inner:
            return f"unreadable: {error}; {inner}"


def roaming(engine, driver, agent, port_b):
    """Its own computer's agent frozen: the phone says so and uses the other computer; back after."""
    name, honey = f"{engine[:3]}Figs", f"{engine[:3]}Honey"
    wait("the phone's kept session naming the other computer", lambda: f":{port_b}" in driver.execute_script(
        "return JSON.stringify(JSON.parse(localStorage.getItem('house-pulse-snapshot-1') || '{}').session?.agents || [])"), timeout=15)
    wait("the worker's copy of the page allowing the other computer", lambda: f":{port_b}" in (driver.execute_script(
        "return caches.keys().then((k) => caches.open(k[0])).then((c) => c.match('/')).then((r) => r && r.headers.get('content-security-policy'))")
        or ""), timeout=15)
    os.kill(agent.process.pid, signal.SIGSTOP)
    try:
        try:
            took = wait("the phone using the other computer", lambda: driver.execute_script("return document.body.dataset.ready") == "roaming",
                        timeout=20)[1]
        except Failed:
            raise Failed(f"its computer frozen, the phone shows {driver.execute_script('return document.body.dataset.ready')!r}: "
                         f"{driver.find_element(By.ID, 'offline').get_attribute('textContent')!r}")
        said = driver.find_element(By.ID, "offline").get_attribute("textContent")
        if "does not answer" not in said:
            raise Failed(f"roaming, the banner says {said!r}")
        tap(driver, "add", name)
        wait(f"{name} on the other computer", lambda: name in web_support.cli(phones.BIN, phones.HOME_B, "shop", "list"), timeout=10)
        queued = driver.execute_script("return localStorage.getItem('house-pulse-queue-1') || '[]'")
        if queued != "[]":
            raise Failed(f"roaming, the phone queued its change instead of sending it: {queued}")
        web_support.cli(phones.BIN, phones.HOME_B, "shop", "add", honey)
        wait(f"{honey}, added on the other computer, live on the phone",
             lambda: any(honey in text(e) for e in driver.find_elements(By.CSS_SELECTOR, "#shop-list li")), timeout=10)
        accessible(driver, "roaming")
        phones.shot(driver, f"roaming-{engine.lower()}")
    finally:
        os.kill(agent.process.pid, signal.SIGCONT)
    wait("back on its own computer", lambda: driver.execute_script(
        "return document.body.dataset.ready === 'true' && document.getElementById('offline').hidden"), timeout=25)
    wait(f"{name} on its own computer, by sync", lambda: name in listed()[0], timeout=15)
    ok(f"{engine}: its computer frozen, the phone used the other computer after {took:.1f} s (saying so): {name} sent there at once, "
       f"{honey} added there shown live; back on its own computer when it woke")


def main():
    phones.namespaces()
    agent = web_support.Agent(phones.BIN, phones.HOME, "--web", "127.0.0.1:0")
    phones.cleanups.append(agent.stop)
    ready = agent.event("ready")
    other = web_support.Agent(phones.BIN, phones.HOME_B, "--web", "127.0.0.1:0", "--peer", f"127.0.0.1:{ready['port']}")
    phones.cleanups.append(other.stop)
    other.event("ready")
    state = phones.cli_json("phones", "on", "--port", "0")
    port, fingerprint = state["port"], state["fingerprint"]
    # Its certificate comes from the root's keeper through the household: it may say "not yet" first.
    phones.sh(phones.BIN, "phones", "on", "--port", "0", "--home", phones.HOME_B, check=False)

    def other_serving():
        state_b = json.loads(web_support.cli(phones.BIN, phones.HOME_B, "phones", "--json"))
        return state_b if state_b.get("fingerprint") == fingerprint and state_b.get("port") and not state_b.get("problem") else None
    port_b = wait("the other computer serving phones under the household's CA", other_serving, timeout=20)[0]["port"]
    setup = phones.cli_json("phones", "add", "Setup", "--host", phones.AGENT_FOR_PHONE)["setup"]
    der = urllib.request.urlopen(setup + ".crt", timeout=10).read()
    root_der, root_pem = os.path.join(phones.SCRATCH, "root.der"), os.path.join(phones.SCRATCH, "root.pem")
    with open(root_der, "wb") as f:
        f.write(der)
    phones.sh("openssl", "x509", "-inform", "der", "-in", root_der, "-out", root_pem)

    home = os.path.join(phones.SCRATCH, "chromium-home")
    os.makedirs(os.path.join(home, ".pki", "nssdb"))
    phones.sh("certutil", "-d", f"sql:{home}/.pki/nssdb", "-N", "--empty-password")
    phones.sh("certutil", "-d", f"sql:{home}/.pki/nssdb", "-A", "-t", "C,,", "-n", "House Pulse", "-i", root_der)
    only = os.environ.get("PULSE_ENGINES", "Chromium,WebKitGTK,Firefox").split(",")
    for engine, start in [("Chromium", lambda: phones.PhoneBrowser(home, 9515 + phones.OCTET)),
                          ("WebKitGTK", lambda: WebKitPhone(root_pem, 4444 + phones.OCTET)),
                          ("Firefox", lambda: web_support.Firefox(390, 844, namespace=phones.NETS["phone"][0],
                                                                  address=phones.NETS["phone"][4], trust=root_der))]:
        if engine not in only:
            continue
        try:
            phone = start()
        except Exception as error:  # the engine cannot start here: said, and counted as a failure
            failures.append(engine)
            print(f"FAILED: {engine} did not start: {error}", flush=True)
            continue
        # Each engine is a phone of its own, closed before the next starts (its page's feed and
        # kept connections gone with it): one engine's leftovers never stand in the next one's way.
        phones.cleanups.append(phone.quit)
        try:
            try:
                ca_page(phone.driver, setup, fingerprint)
                pair(phone.driver, f"{engine} phone")
                accessible(phone.driver, "online")
                ok(f"{engine}: the CA page shows the computer's fingerprint; paired by the link its QR code holds, trusting the household root, "
                   "its service worker in control")
            except Exception as error:  # the pairing failed: the engine's other checks cannot run
                failures.append(engine)
                print(f"FAILED: {engine}: {error}", flush=True)
                continue
            sequences(engine, phone.driver, (port, port_b))
            check(f"{engine}: roaming", lambda: roaming(engine, phone.driver, agent, port_b))
            phones.shot(phone.driver, f"engine-{engine.lower()}")
        finally:
            phones.cleanups.remove(phone.quit)
            phone.quit()
    print(f"engines: {len(failures)} failed")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    phones.configure(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
    try:
        web_support.run(main)
    finally:
        phones.cleanup()
