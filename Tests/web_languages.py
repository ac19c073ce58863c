#!/usr/bin/env python3
"""The page in every language, in a real browser (headless Chromium, Selenium), against
one running agent whose home holds the pseudo-language `qps` (every English message
wrapped in ⟦…⟧, Tests/TwoPeerTests/LanguageTests.swift writes it).

    web_languages.py PULSE_PEER HOME DATA_WORDS [SCREENSHOT_DIR] [--engine=firefox|webkit]

Checks: the browser's Accept-Language picks the page's language; the choice in More (this
computer, and the member's, which this computer's overrides) wins over it; under the
pseudo-language no English is left on any tab (every text, label and placeholder comes
from the catalogue); no tab is wider than the window in Polish or German at 390 and 1366
pixels, light and dark. With SCREENSHOT_DIR, saves every tab in Polish and German at both
widths (docs/screenshots/languages). Each check prints `ok …`; the first failure exits 1.

On Firefox ESR or WebKitGTK (`--engine=`, issue 56): the choices and the layouts, in light (the
engine's own parts: its Accept-Language, its layout and line breaking); the pseudo-language's
check is of the catalogue's coverage, the same words on every engine, and runs on Chromium.
"""
import json
import os
import re
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

import web_support
from web_support import Failed, wait

ENGINE = web_support.engine_option(sys.argv)
BIN, HOME, DATA = sys.argv[1:4]
SHOTS = sys.argv[4] if len(sys.argv) > 4 else None
# The household's data, and the languages' own names (each shown in its own language, never translated).
DATA_WORDS = DATA.split(",") + ["English", "Polski", "Deutsch", "Nederlands", "qps"]
TABS = ["shopping", "tasks", "backlog", "kids", "more"]
HERE = os.path.dirname(os.path.abspath(__file__))


def catalogue(language):
    with open(os.path.join(HERE, "..", "Sources", "PulseHousehold", "Resources", f"messages-{language}.json"), encoding="utf-8") as f:
        return json.load(f)


def browser(accept, width=900, height=1000):
    return web_support.open_browser(ENGINE, width, height, accept_language=accept)


def sign_in(driver):
    link = web_support.cli(BIN, HOME, "open", "--print").split()[-1]
    driver.get(link)
    wait("the page to load", lambda: driver.execute_script("return document.body.dataset.ready === 'true'"), timeout=15)


def page_language(driver):
    return driver.execute_script("return document.documentElement.lang")


def tab_label(driver, name):
    return driver.find_element(By.CSS_SELECTOR, f"#t-{name} [data-i18n]").text


def tab(driver, name):
    driver.find_element(By.ID, f"t-{name}").click()
    wait(f"the {name} tab", lambda: driver.find_element(By.ID, f"tab-{name}").is_displayed())
    driver.execute_script("window.scrollTo(0, 0)")
    wait("the tab's fade-in to end", lambda: driver.execute_script("return document.getAnimations().length === 0"))


def expect_language(driver, language, why):
    wait(f"the page in {language} ({why})", lambda: page_language(driver) == language, timeout=10)
    want = catalogue(language)["page.tab.shopping"]
    web_support.expect(f"{why}: the Shopping tab says {tab_label(driver, 'shopping')!r}, not {want!r}", not (tab_label(driver, "shopping") != want), "")


def choose(driver, select_id, value):
    tab(driver, "more")
    select = Select(driver.find_element(By.ID, select_id))
    driver.execute_script("document.body.dataset.ready = 'false'")
    select.select_by_value(value)
    wait("the page to load again", lambda: driver.execute_script("return document.body.dataset.ready === 'true'"), timeout=15)


def choices():
    for language, accept in [("pl", "pl-PL,pl;q=0.9,en;q=0.5"), ("de", "de-DE,de"), ("nl", "nl"), ("en", "fr-FR,fr;q=0.9")]:
        driver = browser(accept)
        try:
            sign_in(driver)
            expect_language(driver, language, f"Accept-Language {accept}")
        finally:
            driver.quit()
    web_support.section_ok("Accept-Language picks Polish, German, Dutch; an unknown language gets English")

    # Not signed in: the notice in the browser's language too.
    link = web_support.cli(BIN, HOME, "open", "--print").split()[-1]
    driver = browser("de-DE,de")
    try:
        driver.get(link.split("/login")[0] + "/")
        wait("the signed-out notice in German", lambda: driver.find_element(By.ID, "signed-out").is_displayed()
             and page_language(driver) == "de", timeout=10)
        notice = driver.find_element(By.ID, "signed-out").text
        web_support.expect(f"the signed-out notice is not German: {notice!r}", not (catalogue("de")["page.signed_out.title"] not in notice), "")
    finally:
        driver.quit()
    web_support.section_ok("signed out, the notice is in the browser's language")

    driver = browser("pl")
    try:
        sign_in(driver)
        expect_language(driver, "pl", "Accept-Language pl")
        choose(driver, "language-member", "nl")
        expect_language(driver, "nl", "the member chose Dutch")
        choose(driver, "language-machine", "de")
        expect_language(driver, "de", "this computer chose German over the member's Dutch")
        choose(driver, "language-machine", "")
        expect_language(driver, "nl", "this computer back to automatic: the member's Dutch")
        choose(driver, "language-member", "")
        expect_language(driver, "pl", "both automatic: the browser's Polish")
    finally:
        driver.quit()
    web_support.section_ok("the choice in More: this computer's over the member's over the browser's")


def visible_words(driver):
    """Every text a person can read or hear on the current tab: text, labels, placeholders, titles."""
    return driver.execute_script("""
      // The visible text as one string (a message's ⟦…⟧ may hold elements: a <code>, a <strong>).
      const out = [document.title, document.body.innerText];
      const shown = (e) => e.offsetParent !== null || getComputedStyle(e).position === 'fixed';
      for (const e of document.querySelectorAll('[aria-label],[placeholder],[title],[alt]')) {
        if (!shown(e)) continue;
        for (const a of ['aria-label', 'placeholder', 'title', 'alt']) if (e.getAttribute(a)) out.push(e.getAttribute(a));
      }
      return out;""")


def english_left(text):
    depth, out = 0, []
    for c in text:
        if c == "⟦":
            depth += 1
            out.append(" ")
        elif c == "⟧":
            depth = max(0, depth - 1)
            out.append(" ")
        elif depth == 0:
            out.append(c)
    words = re.findall(r"[A-Za-zÀ-ž][A-Za-zÀ-ž'’-]{2,}", "".join(out))
    return [w for w in words if not any(w.lower().startswith(d.lower()) or d.lower().startswith(w.lower()) for d in DATA_WORDS)]


def pseudo():
    driver = browser("qps")
    try:
        sign_in(driver)
        wait("the pseudo-language", lambda: page_language(driver) == "qps", timeout=10)
        checked = 0
        for name in TABS:
            tab(driver, name)
            for text in visible_words(driver):
                checked += text.count("⟦")
                left = english_left(text)
                web_support.expect(f"hard-coded English on the {name} tab: {left} in {text!r}", not (left), "")
        web_support.expect(f"only {checked} messages seen", not (checked < 100), "")

        def look(where):
            nonlocal checked
            for text in visible_words(driver):
                checked += text.count("⟦")
                left = english_left(text)
                web_support.expect(f"hard-coded English in {where}: {left} in {text!r}", not (left), "")
        # Issue 41's screens: the keypad, parents' mode, the catalogue modal, "Add a computer".
        tab(driver, "kids")
        driver.find_element(By.ID, "parents-open").click()
        wait("the keypad", lambda: driver.execute_script("return document.getElementById('pin-pad').open"))
        look("the keypad")
        for digit in "1234":
            driver.find_element(By.CSS_SELECTOR, f'#pin-pad [data-digit="{digit}"]').click()
        wait("parents' mode", lambda: driver.find_element(By.ID, "parents-panel").is_displayed())
        look("parents' mode")
        driver.execute_script("document.querySelector('.catalogue-open').click()")
        wait("the catalogue", lambda: driver.execute_script("return document.getElementById('catalogue-modal').open"))
        look("the catalogue")
        driver.find_element(By.ID, "catalogue-close").click()
        tab(driver, "more")
        driver.execute_script("document.getElementById('add-computer').click()")
        wait("the pairing code", lambda: driver.find_element(By.ID, "pairing-code").text)
        look("“Add a computer”")
        # Issue 57's: a list of its own (the switcher, its rename and delete), an item's edit form
        # with the lists to send it to, and the question a list holding items asks.
        tab(driver, "shopping")
        chip = wait("the list Qlidl", lambda: next((c for c in driver.find_elements(By.CSS_SELECTOR, "#shop-lists button[data-list]")
                                                    if "Qlidl" in c.get_attribute("textContent")), None))[0]
        driver.execute_script("arguments[0].click()", chip)
        wait("Qbutter on Qlidl", lambda: "Qbutter" in driver.execute_script("return document.getElementById('shop-list').textContent"))
        look("a list of its own")
        driver.execute_script("document.querySelector('#shop-list button.details').click()")
        wait("the item's edit form with the lists", lambda: driver.find_elements(By.CSS_SELECTOR, "#shop-list form.item-edit select.item-list"))
        look("an item's edit form")
        driver.execute_script("document.getElementById('list-delete').click()")
        wait("the list's deletion dialog", lambda: driver.execute_script("return document.getElementById('list-delete-dialog').open"))
        look("deleting a list that holds items")
        driver.execute_script("document.getElementById('list-delete-cancel').click()")
    finally:
        driver.quit()
    web_support.section_ok(f"under the pseudo-language all text on 5 tabs, the keypad, parents' mode, the catalogue, “Add a computer”, "
          "a list of its own, an item's edit form and a list's deletion "
          f"({checked} messages) comes from the catalogue")


# Words broken across lines in an element's text (issue 52, item 12: "Kitche / n / laptop" in
# More → Computers at 390 px), and its lines that take more than one line where one is meant
# (the member's "należy do: Anna" was three).
BROKEN_WORDS = """
  const root = arguments[0], broken = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      if (tops.size > 1) broken.push(word[0]);
    }
  }
  const lines = (e) => { const r = document.createRange(); r.selectNodeContents(e);
    return new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))).size; };
  const long = [...root.querySelectorAll('.name + .when')].filter((e) => lines(e) > 1).map((e) => e.textContent);
  return [broken, long];"""


def machine_list_text(driver):
    return driver.execute_script("return document.getElementById('machine-list').innerText")


def rename_the_other_computer(driver, name):
    """The other computer's, through the page as a person would: More → Computers → Rename."""
    tab(driver, "more")

    def opened():  # the list may be drawn again between finding the button and clicking it
        if not driver.find_elements(By.CSS_SELECTOR, "#machine-list input.edit"):
            driver.find_element(By.XPATH, '//ul[@id="machine-list"]/li[.//button[contains(@class, "remove")]]//button[contains(@class, "rename")]').click()
        return driver.find_element(By.CSS_SELECTOR, "#machine-list input.edit")
    field = wait("the rename field", opened)[0]
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(name, Keys.ENTER)
    # innerText, not WebDriver's element text: WebKitGTK's gave none for this list while it showed the name.
    wait("the new name", lambda: name in machine_list_text(driver), timeout=10)


def layouts():
    computers = []
    for language in ["pl", "de"]:
        driver = browser(language)
        try:
            sign_in(driver)
            expect_language(driver, language, "for the screenshots")
            if language == "pl":
                rename_the_other_computer(driver, "Kitchen laptop")
            for width, height in [(320, 640), (390, 844), (1366, 900)]:
                driver.set_window_size(width, height)
                for appearance in ["light", "dark"] if ENGINE == "chromium" else ["light"]:
                    driver.execute_script(f"document.documentElement.dataset.appearance = '{appearance}'")
                    for name in TABS:
                        tab(driver, name)
                        # Nothing scrolls sideways, nothing is cut (fixed parts, the tab bar, too).
                        out = web_support.overflowing(driver)
                        web_support.expect(f"{language} {name} at {width} px ({appearance}): {out[:5]}", not (out), "")
                        if name == "more":
                            broken, long = driver.execute_script(BROKEN_WORDS, driver.find_element(By.ID, "machine-list"))
                            if broken or long:
                                raise Failed(f"{language} More → Computers at {width} px: words broken across lines {broken}, "
                                             f"a member's line over several lines {long}")
                            computers.append(machine_list_text(driver).splitlines()[0])
                        if SHOTS and appearance == "light" or SHOTS and width == 390 and name in ("shopping", "kids"):
                            os.makedirs(SHOTS, exist_ok=True)
                            driver.save_screenshot(os.path.join(SHOTS, f"{language}-{width}-{name}-{appearance}.png"))
        finally:
            driver.quit()
    web_support.section_ok(f"Polish and German fit at 320 (WCAG's reflow), 390 and 1366 px, {'light and dark' if ENGINE == 'chromium' else 'light'}, "
                           f"on every tab on {ENGINE}"
          + (f"; screenshots in {SHOTS}" if SHOTS else ""))
    web_support.section_ok(f"at 320 and 390 px in Polish and German More → Computers breaks no word and keeps whose computer it is on one line "
          f"({computers[0]!r}, {computers[-1]!r})")


def main():
    choices()
    if ENGINE == "chromium":
        pseudo()
    layouts()


if __name__ == "__main__":
    web_support.run(main)
