#!/usr/bin/env python3
"""The page against WCAG 2.2 AA, by axe-core (the rules engine the industry uses; axe.min.js from
the PyPI wheel axe-playwright-python, scripts/setup.sh), in a real browser (headless Chromium,
Selenium), against one running agent whose home has a household, a kid with a chore done today
and a PIN:

    web_accessibility.py PULSE_PEER HOME PIN [ENGINE]

Every tab, the keypad, parents' mode, the catalogue modal and "Add a computer", at 390 and 1366
px, light and dark, in English, Polish and German (on Chromium; on `firefox` and `webkit`, the
other engines, in English: the rules are the same, the words Chromium's run checks): no violation of the rules tagged wcag2a,
wcag2aa, wcag21a, wcag21aa and wcag22aa (names of controls, labels, contrast, ARIA, lists,
landmarks…). A screen is checked once its animations ended (a fading element is not what a person
reads). Each check prints `ok …`; the first failure exits 1.
"""
import os
import sys

import axe_playwright_python

import web_support
from web_support import Failed, cli, wait

BIN, HOME, PIN = sys.argv[1:4]
ENGINE = sys.argv[4] if len(sys.argv) > 4 else "chromium"
AXE = open(os.path.join(os.path.dirname(axe_playwright_python.__file__), "axe.min.js"), encoding="utf-8").read()
RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
TABS = ["shopping", "tasks", "backlog", "kids", "more"]


def violations(driver):
    """axe's violations of the page as it is now: `rule (impact): selectors`."""
    wait("the page's animations to end", lambda: driver.execute_script(
        "return document.getAnimations().filter((a) => a.playState === 'running').length === 0"))
    if not driver.execute_script("return typeof axe === 'object'"):
        driver.execute_script(AXE)
    result = driver.execute_async_script(
        "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}, resultTypes: ['violations']})"
        ".then(arguments[arguments.length - 1])", RULES)
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]} {v['nodes'][0].get('failureSummary', '')[:160]!r}"
            for v in result["violations"]]


def check(driver, where, seen):
    for width, height in [(390, 844), (1366, 900)]:
        driver.set_window_size(width, height)
        for appearance in ["light", "dark"]:
            driver.execute_script("document.documentElement.dataset.appearance = arguments[0]", appearance)
            found = violations(driver)
            if found:
                raise Failed(f"{where} at {width} px ({appearance}): {found}")
            seen.append(where)


def click(driver, script):
    driver.execute_script(script)


def walk(language, accept):
    driver = web_support.open_browser(ENGINE, 1366, 900, accept_language=accept)
    seen = []
    try:
        driver.get(cli(BIN, HOME, "open", "--print").split()[-1])
        wait("the page", lambda: driver.execute_script("return document.body.dataset.ready === 'true'"), timeout=15)
        wait(f"the page in {language}", lambda: driver.execute_script("return document.documentElement.lang") == language, timeout=10)
        for name in TABS:
            click(driver, f"document.getElementById('t-{name}').click()")
            check(driver, f"the {name} tab", seen)
        click(driver, "document.getElementById('t-kids').click()")
        click(driver, "document.getElementById('parents-open').click()")
        wait("the keypad", lambda: driver.execute_script("return document.getElementById('pin-pad').open"))
        check(driver, "the keypad", seen)
        for digit in PIN:
            click(driver, f"document.querySelector('#pin-pad [data-digit=\"{digit}\"]').click()")
        wait("parents' mode", lambda: driver.execute_script("return !document.getElementById('parents-panel').hidden"), timeout=10)
        check(driver, "parents' mode", seen)
        click(driver, "document.querySelector('.catalogue-open').click()")
        wait("the catalogue", lambda: driver.execute_script("return document.getElementById('catalogue-modal').open"))
        check(driver, "the catalogue", seen)
        click(driver, "document.getElementById('catalogue-close').click()")
        click(driver, "document.getElementById('parents-lock').click()")
        click(driver, "document.getElementById('t-more').click()")
        click(driver, "document.getElementById('add-computer').click()")
        wait("the pairing code", lambda: driver.execute_script("return document.getElementById('pairing-code').textContent"), timeout=10)
        check(driver, "“Add a computer”", seen)
    finally:
        driver.quit()
    return len(seen)


def main():
    checked = 0
    languages = [("en", "en-GB,en"), ("pl", "pl-PL,pl"), ("de", "de-DE,de")] if ENGINE == "chromium" else [("en", "en-GB,en")]
    for language, accept in languages:
        checked += walk(language, accept)
    said = "in English, Polish and German" if ENGINE == "chromium" else "in English"
    print(f"ok axe-core finds no WCAG 2.2 AA violation on 5 tabs, the keypad, parents' mode, the catalogue and "
          f"“Add a computer”, at 390 and 1366 px, light and dark, {said}, on {ENGINE} ({checked} screens)")


if __name__ == "__main__":
    web_support.run(main)
