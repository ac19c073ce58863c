#!/usr/bin/env python3
"""The page against WCAG 2.2 AA, by axe-core (the rules engine the industry uses; axe.min.js from
the PyPI wheel axe-playwright-python, scripts/setup.sh), in a real browser, against an agent this
script starts on HOME (a household, a kid with a chore done today and peanuts to spend, three
active tasks, a PIN), and one on a new home (the welcome):

    web_accessibility.py PULSE_PEER HOME PIN [ENGINE]

The screens and states: the welcome, every tab, the focus rule's refusal, the keypad and a wrong
PIN said on it, parents' mode, the catalogue modal, the "Great job!" half-sheet, a reward's
confetti, "Add a phone" (its codes and steps), "Add a computer", and the page telling its agent
does not answer (the phone app online, offline and roaming: web_phone_engines.py); at 390 and 1366 px,
light and dark, in English, Polish, German and Dutch (on Chromium; on `firefox` and `webkit`, the
other engines, in English: the rules are the same, the words Chromium's run checks): no
violation of the rules tagged wcag2a, wcag2aa, wcag21a, wcag21aa and wcag22aa (names of
controls, labels, contrast, ARIA, lists, landmarks…). A screen is checked once its animations
ended (a fading element is not what a person reads); a moment that goes by itself (the
half-sheet, the confetti) is held while it is checked: the page's timers of a second or more wait
until the checks are done, as for a person who reads slowly.

On Chromium each state also reflows (WCAG 1.4.10 and 1.4.4): at 320 px, and the desktop window at
200 % zoom (1366 × 900 device pixels seen as 683 × 450 CSS pixels, two device pixels each, as
the browser's zoom makes it), nothing scrolls sideways and no text is cut. With
PULSE_SCREENSHOTS=DIR the pictures of both are kept in DIR/accessibility.

Each check prints `ok …`; the first failure exits 1.
"""
import os
import re
import sys
import tempfile

from selenium.webdriver.common.keys import Keys

import web_support
from web_support import Failed, cli, wait

BIN, HOME, PIN = sys.argv[1:4]
ENGINE = sys.argv[4] if len(sys.argv) > 4 else "chromium"
TABS = ["shopping", "tasks", "backlog", "kids", "more"]
SHOTS = os.path.join(os.environ["PULSE_SCREENSHOTS"], "accessibility") if os.environ.get("PULSE_SCREENSHOTS") else None
# While held, a page's timer of a second or more (a celebration's, a toast's) waits; cleared, it
# is forgotten; released, it runs its whole delay from then (the feed's silence timer, re-armed at
# every ping, keeps working: a timer's id stays the page's to clear, before and after).
HOLD = """if (!window.pulseRelease) {
  const realSet = window.setTimeout.bind(window), realClear = window.clearTimeout.bind(window);
  const held = new Map(), armed = new Map();
  let next = -1;
  window.setTimeout = (f, ms, ...a) => {
    if (!window.pulseHolding || !(ms >= 1000)) return realSet(f, ms, ...a);
    const id = next--;
    held.set(id, [f, ms, a]);
    return id;
  };
  window.clearTimeout = (id) => {
    if (held.delete(id)) return;
    if (armed.has(id)) { realClear(armed.get(id)); armed.delete(id); return; }
    realClear(id);
  };
  window.pulseRelease = () => {
    window.pulseHolding = false;
    for (const [id, [f, ms, a]] of held) armed.set(id, realSet(() => { armed.delete(id); f(...a); }, ms));
    held.clear();
  };
}
window.pulseHolding = true;"""
RELEASE = "window.pulseRelease();"


def check(driver, where, seen, language, element=None):
    """axe at 390 and 1366 px, light and dark; on Chromium the reflow too (`element`: what the
    pictures show, scrolled into view)."""
    for width, height in [(390, 844), (1366, 900)]:
        driver.set_window_size(width, height)
        for appearance in ["light", "dark"]:
            driver.execute_script("document.documentElement.dataset.appearance = arguments[0]", appearance)
            # The colours as a person sees them once the switch settled (WebKitGTK under load was
            # still fading a button from the other appearance's colours when axe read them).
            wait("the page's transitions to end", lambda: driver.execute_script(
                "return document.getAnimations().filter((a) => a.playState === 'running').length === 0"))
            found = web_support.axe_violations(driver)
            if found:
                raise Failed(f"{where} at {width} px ({appearance}, {language}): {found}")
            seen.append(where)
    driver.execute_script("document.documentElement.dataset.appearance = 'light'")
    if ENGINE == "chromium":
        reflow(driver, where, language, element)


def reflow(driver, where, language, element=None):
    """At 320 px, and 1366 × 900 at 200 % zoom: nothing scrolls sideways, no text is cut."""
    for label, width, height, scale in [("320px", 320, 640, 1), ("zoom200", 683, 450, 2)]:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": False})
        try:
            wait("the page's animations to end", lambda: driver.execute_script(
                "return document.getAnimations().filter((a) => a.playState === 'running').length === 0"))
            out = web_support.overflowing(driver)
            if out:
                raise Failed(f"{where} at {label} ({language}) does not reflow: {out[:5]}")
            if SHOTS:
                if element:
                    driver.execute_script("document.getElementById(arguments[0]).scrollIntoView({block: 'start'})", element)
                os.makedirs(SHOTS, exist_ok=True)
                name = re.sub(r"[^a-zA-Z0-9]+", "-", where).strip("-")
                driver.save_screenshot(os.path.join(SHOTS, f"{language}-{name}-{label}.png"))
        finally:
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def click(driver, script):
    driver.execute_script(script)


def shown(driver, element_id):
    return driver.execute_script("const e = document.getElementById(arguments[0]); return !!e && !e.hidden && e.getClientRects().length > 0",
                                 element_id)


def welcome(driver, home, seen, language):
    """A computer's first run: the welcome, before any household."""
    driver.get(cli(BIN, home, "open", "--print").split()[-1])
    wait("the welcome", lambda: shown(driver, "welcome"), timeout=15)
    wait(f"the welcome in {language}", lambda: driver.execute_script("return document.documentElement.lang") == language, timeout=10)
    check(driver, "the welcome", seen, language)


def walk(language, accept, welcome_home, agent=None):
    """Every screen and state in one language; `agent`: stopped at the end, the page saying so."""
    driver = web_support.open_browser(ENGINE, 1366, 900, accept_language=accept)
    seen = []
    try:
        welcome(driver, welcome_home, seen, language)
        driver.get(cli(BIN, HOME, "open", "--print").split()[-1])
        wait("the page", lambda: driver.execute_script("return document.body.dataset.ready === 'true'"), timeout=15)
        wait(f"the page in {language}", lambda: driver.execute_script("return document.documentElement.lang") == language, timeout=10)
        for name in TABS:
            click(driver, f"document.getElementById('t-{name}').click()")
            check(driver, f"the {name} tab", seen, language)
        # A fourth active task: the focus rule's refusal, said beside the field.
        click(driver, "document.getElementById('t-tasks').click()")
        field = driver.find_element("id", "task-title")
        field.send_keys("Paint the fence", Keys.ENTER)
        wait("the focus rule's refusal", lambda: shown(driver, "focus-refusal"), timeout=10)
        check(driver, "the focus rule's refusal", seen, language, "focus-refusal")
        click(driver, "document.getElementById('task-refusal-close').click()")
        click(driver, "document.getElementById('t-kids').click()")
        click(driver, "document.getElementById('parents-open').click()")
        wait("the keypad", lambda: driver.execute_script("return document.getElementById('pin-pad').open"))
        check(driver, "the keypad", seen, language)
        wrong = "0000" if PIN != "0000" else "1111"
        for digit in wrong:
            click(driver, f"document.querySelector('#pin-pad [data-digit=\"{digit}\"]').click()")
        wait("a wrong PIN said", lambda: driver.execute_script("return document.getElementById('pin-error').textContent.trim()"), timeout=10)
        check(driver, "the keypad saying a wrong PIN", seen, language)
        for digit in PIN:
            click(driver, f"document.querySelector('#pin-pad [data-digit=\"{digit}\"]').click()")
        wait("parents' mode", lambda: driver.execute_script("return !document.getElementById('parents-panel').hidden"), timeout=10)
        check(driver, "parents' mode", seen, language)
        click(driver, "document.querySelector('.catalogue-open').click()")
        wait("the catalogue", lambda: driver.execute_script("return document.getElementById('catalogue-modal').open"))
        check(driver, "the catalogue", seen, language)
        click(driver, "document.getElementById('catalogue-close').click()")
        click(driver, "document.getElementById('parents-lock').click()")
        # The success moments, each held while checked.
        click(driver, "document.querySelector('#kid-views [data-view=\"earn\"]').click()")
        for view, card, moment, what in [("earn", '#kid-cards .kid-card[aria-disabled="false"]', "celebration", "the “Great job!” half-sheet"),
                                         ("rewards", "#kid-cards .kid-card", "confetti", "a reward's confetti")]:
            click(driver, f"document.querySelector('#kid-views [data-view=\"{view}\"]').click()")
            wait(f"a card of {view}", lambda: driver.execute_script(f"return !!document.querySelector('{card}')"), timeout=10)
            driver.execute_script(HOLD)
            try:
                click(driver, f"document.querySelector('{card}').click()")
                wait(what, lambda: shown(driver, moment), timeout=10)
                check(driver, what, seen, language)
            finally:
                driver.execute_script(RELEASE)
            wait(f"{what} gone", lambda: not shown(driver, moment), timeout=10)
        click(driver, "document.getElementById('t-more').click()")
        # "Add a phone": its two QR codes, the certificate's fingerprint and the steps.
        wait("More → Phones, on", lambda: driver.execute_script("return !document.getElementById('phone-add-form').hidden"), timeout=10)
        driver.execute_script("document.getElementById('phone-name').value = arguments[0]", "Anna's phone")
        click(driver, "document.querySelector('#phone-add-form button[type=submit]').click()")
        wait("the phone's two codes", lambda: shown(driver, "phone-pairing"), timeout=10)
        check(driver, "“Add a phone”", seen, language, "phone-pairing")
        click(driver, "document.getElementById('phone-pairing-close').click()")
        click(driver, "document.getElementById('add-computer').click()")
        wait("the pairing code", lambda: driver.execute_script("return document.getElementById('pairing-code').textContent"), timeout=10)
        check(driver, "“Add a computer”", seen, language, "pairing")
        if agent:
            click(driver, "document.getElementById('t-shopping').click()")
            agent.stop()
            wait("the page saying its agent does not answer", lambda: shown(driver, "offline"), timeout=20)
            check(driver, "the page with its agent not answering", seen, language)
    finally:
        driver.quit()
    return len(seen)


def main():
    checked = 0
    languages = [("en", "en-GB,en"), ("pl", "pl-PL,pl"), ("de", "de-DE,de"), ("nl", "nl-NL,nl")] if ENGINE == "chromium" else [("en", "en-GB,en")]
    welcome_home = tempfile.mkdtemp(prefix="pulse-welcome-")
    greeter = web_support.Agent(BIN, welcome_home, "--web", "127.0.0.1:0")
    agent = web_support.Agent(BIN, HOME, "--web", "127.0.0.1:0")
    try:
        greeter.event("welcome")
        agent.event("ready")
        cli(BIN, HOME, "phones", "on", "--port", "0")  # More → Phones, to add one
        for n, (language, accept) in enumerate(languages):
            checked += walk(language, accept, welcome_home, agent if n == len(languages) - 1 else None)
    finally:
        for process in (greeter, agent):
            if process.process.poll() is None:
                process.stop()
    said = "in English, Polish, German and Dutch" if ENGINE == "chromium" else "in English"
    print(f"ok axe-core finds no WCAG 2.2 AA violation on the welcome, 5 tabs, the focus rule's refusal, the keypad and a wrong PIN, "
          f"parents' mode, the catalogue, “Great job!”, a reward's confetti, “Add a phone”, “Add a computer” and the agent not answering, "
          f"at 390 and 1366 px, light and dark, {said}, on {ENGINE} ({checked} screens)")
    if ENGINE == "chromium":
        print("ok every one of them reflows at 320 px and at 200 % zoom (1366 × 900): nothing scrolls sideways, no text is cut"
              + (f"; pictures in {SHOTS}" if SHOTS else ""))


if __name__ == "__main__":
    web_support.run(main)
