#!/usr/bin/env python3
"""The web page in a real browser (headless Chromium driven by Selenium), against two
running agents of one household: A (Anna's machine) and B (Tom's).

    web_e2e.py PULSE_PEER HOME_A HOME_B AGENT_B_PID AGENT_B_WEB_PORT [SCREENSHOT_DIR] [--engine=firefox|webkit]

On Chromium by default; `--engine=` runs the same checks on Firefox ESR or WebKitGTK (issue 56).

Each check prints one line `ok <what> [figures]`; the first failure raises (exit 1) with
what was expected and what the page showed. Waits are conditions with deadlines, never
fixed sleeps. With SCREENSHOT_DIR, saves each tab in light and dark (docs/screenshots).
"""
import json
import os
import signal
import subprocess
import sys
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import web_support
from web_support import Failed, browser, names, tab, wait

ENGINE = web_support.engine_option(sys.argv)
BIN, HOME_A, HOME_B, PID_B, WEB_PORT_B = sys.argv[1:6]
SHOTS = sys.argv[6] if len(sys.argv) > 6 else None


def cli(home, *args):
    return web_support.cli(BIN, home, *args)


def sign_in(driver, home):
    link = cli(home, "open", "--print").split()[-1]
    driver.get(link)
    wait("the page to load its data", lambda: driver.execute_script("return document.body.dataset.ready === 'true'"))
    return link


def row(driver, list_id, text):
    for li in driver.find_elements(By.CSS_SELECTOR, f"#{list_id} li[data-id]"):
        if li.find_element(By.CSS_SELECTOR, ".name").get_attribute("textContent") == text:
            return li
    return None


def click_in_row(driver, list_id, text, button, what):
    """Clicks `button` in the row showing `text`, finding the row again if the list was
    redrawn between finding it and the click (a live update replaces the rows: the element
    found is then stale, and the click did not happen)."""
    def attempt():
        found = row(driver, list_id, text)
        if found is None:
            return False
        found.find_element(By.CSS_SELECTOR, button).click()
        return True
    wait(what, attempt)


def rapid_add(driver, *items):
    """“+ Add”, then each item and Enter. A click on “+ Add” that opened no row within 3 s
    (WebKitGTK under CI's load, once) is made again, as a person whose tap did nothing taps
    again, and said; three that open nothing fail."""
    for attempt in range(3):
        driver.find_element(By.ID, "add-item").click()
        try:
            field = wait("the rapid-entry row", lambda: driver.find_element(By.CSS_SELECTOR, "#shop-rapid input.rapid"), timeout=3)[0]
            break
        except Failed:
            if attempt == 2:
                raise
            print("  (the click on “+ Add” opened no row: clicked again)", flush=True)
    for item in items:
        field.send_keys(item, Keys.ENTER)
        field = wait("the next rapid-entry row", lambda: driver.find_element(By.CSS_SELECTOR, "#shop-rapid input.rapid"))[0]
    sent = time.monotonic()
    field.send_keys(Keys.ENTER)  # Enter on the empty row ends rapid entry
    wait("rapid entry to end", lambda: not driver.find_elements(By.CSS_SELECTOR, "#shop-rapid input.rapid"))
    return sent


def background(driver):
    return driver.execute_script("return getComputedStyle(document.body).backgroundColor")


def main():
    a = web_support.open_browser(ENGINE)
    try:
        b = web_support.open_browser(ENGINE)
    except BaseException:
        a.quit()
        raise
    try:
        sign_in(a, HOME_A)
        sign_in(b, HOME_B)
        b.execute_script("window.__sameDocument = true")  # gone if B's page reloads
        web_support.section_ok("both pages signed in and loaded")

        # --- an item added on A's page appears on B's page within 1 s, no reload ---
        before = time.monotonic()
        rapid_add(a, "Oat milk")
        _, seconds = wait("“Oat milk” on B's page", lambda: "Oat milk" in names(b), timeout=1.0)
        elapsed = time.monotonic() - before
        web_support.expect("B's page reloaded", not (not b.execute_script("return window.__sameDocument === true")), "")
        web_support.section_ok(f"added on A, shown on B without a reload in {elapsed * 1000:.0f} ms (after the Enter)")
        banner = wait("the “New items added” banner on B", lambda: b.find_element(By.ID, "new-items").is_displayed() and
                      b.find_element(By.ID, "new-items").text)[0]
        web_support.expect(f"banner says {banner!r}", not (banner != "New items added (1)"), "")
        web_support.expect("A's own addition raised the banner on A", not (a.find_element(By.ID, "new-items").is_displayed()), "")
        b.find_element(By.ID, "new-items").click()
        wait("the banner to go", lambda: not b.find_element(By.ID, "new-items").is_displayed())
        web_support.section_ok("B shows “New items added (1)” (A, the author, does not); a click dismisses it")

        # --- rapid entry: Enter saves and opens the next row ---
        rapid_add(a, "Eggs", "Bread")
        wait("Eggs and Bread on A", lambda: names(a)[-2:] == ["Eggs", "Bread"])
        wait("Eggs and Bread on B", lambda: {"Eggs", "Bread"} <= set(names(b)))
        banner = wait("the banner counting 2", lambda: b.find_element(By.ID, "new-items").text == "New items added (2)")
        web_support.section_ok("rapid entry added two items; B's banner counts 2")

        # --- check → restock pool → back ---
        click_in_row(a, "shop-list", "Oat milk", "button.check", "Oat milk checked off on A")
        wait("Oat milk off A's list", lambda: "Oat milk" not in names(a))
        wait("Oat milk off B's list", lambda: "Oat milk" not in names(b))
        a.find_element(By.ID, "restock-toggle").click()
        wait("Oat milk in A's restock pool", lambda: "Oat milk" in names(a, "restock-list"))
        wait("Oat milk in B's restock pool", lambda: "Oat milk" in b.execute_script(
            "return [...document.querySelectorAll('#restock-list .name')].map(n => n.textContent)"))
        # A tap on ↺ that reached no row (WebKitGTK under CI's load, once: the pool was drawn again
        # as B's changes arrived, and the click met the row being replaced) is made again, as a
        # person whose tap did nothing taps again, and said; the item still in the pool after
        # three is a failure, as is one gone from the pool but not back on the list.
        for attempt in range(3):
            click_in_row(a, "restock-list", "Oat milk", "button.restock", "Oat milk restocked from A's pool")
            try:
                wait("Oat milk back on A's list", lambda: "Oat milk" in names(a), timeout=3)
                break
            except Failed:
                if attempt == 2 or "Oat milk" not in names(a, "restock-list"):
                    raise
                print("  (the tap on ↺ reached no row: tapped again)", flush=True)
        wait("Oat milk back on B's list", lambda: "Oat milk" in names(b))
        wait("the pool empty again", lambda: "Oat milk" not in names(a, "restock-list"))
        web_support.section_ok("checked off → restock pool (both pages) → back on the list (both pages)")

        # --- a change from the feed is shown at once, before any reload answers (issue 54) ---
        # B's reloads of the list are held for 3 s: what B shows within 1 s came from the feed's
        # event itself (live.js), not from asking the agent again.
        b.execute_script("""
            window.__fetch = window.fetch;
            window.fetch = (url, init) => String(url).includes('/api/call/shop.list')
              ? new Promise((resolve) => setTimeout(resolve, 3000)).then(() => window.__fetch(url, init))
              : window.__fetch(url, init);""")
        rapid_add(a, "Green tea")
        wait("Green tea on B's page from the event alone", lambda: "Green tea" in names(b), timeout=1.0)
        click_in_row(a, "shop-list", "Eggs", "button.check", "Eggs checked off on A")
        wait("Eggs off B's list from the event alone", lambda: "Eggs" not in names(b), timeout=1.0)
        b.execute_script("window.fetch = window.__fetch")
        wait("B's list as the agent has it once its reloads answer", lambda: sorted(names(b)) == sorted(names(a)), timeout=10)
        web_support.section_ok("B shows an addition and a check from the feed's events within 1 s, its reloads held back 3 s")

        # --- clear all + undo ---
        shown = sorted(names(a))
        a.find_element(By.ID, "clear-all").click()
        wait("A's list empty", lambda: names(a) == [] and a.find_element(By.ID, "shop-empty").is_displayed())
        wait("B's list empty", lambda: names(b) == [])
        undo = wait("the undo toast", lambda: a.find_element(By.ID, "toast-action").is_displayed() and
                    a.find_element(By.ID, "toast-action"))[0]
        web_support.expect(f"the toast's button says {undo.text!r}", not (undo.text != "Undo"), "")
        undo.click()
        wait("the items back on A", lambda: sorted(names(a)) == shown)
        wait("the items back on B", lambda: sorted(names(b)) == shown)
        web_support.section_ok(f"clear all emptied both pages; Undo brought back {len(shown)} items on both")

        # --- tasks: assigned to a member; the focus rule's refusal shown ---
        tab(a, "tasks")
        tab(b, "tasks")
        a.find_element(By.ID, "task-title").send_keys("Take out the bins")
        a.find_element(By.CSS_SELECTOR, "#task-assignee").send_keys("Tom")
        a.find_element(By.ID, "task-add").click()
        pill_a = wait("the task with Tom's pill on A", lambda: (r := row(a, "task-list", "Take out the bins")) and
                      r.find_element(By.CSS_SELECTOR, ".pill").text)[0]
        pill_b = wait("the task on B, Tom's machine", lambda: (r := row(b, "task-list", "Take out the bins")) and
                      r.find_element(By.CSS_SELECTOR, ".pill").text)[0]
        web_support.expect(f"pills: A {pill_a!r}, B {pill_b!r} (expected Tom on A, Me on B)", not ((pill_a, pill_b) != ("Tom", "Me")), "")
        exported = json.loads(cli(HOME_B, "task", "--json"))
        web_support.expect(f"B's household does not have the task assigned to Tom: {exported}", not (not any(t["title"] == "Take out the bins" and t.get("assignee") == "Tom" for t in exported)), "")
        web_support.section_ok("a task assigned to Tom on A: pill “Tom” on A, “Me” on Tom's machine B, assignee Tom in B's database")
        for title in ["Water the plants", "Call the plumber"]:
            a.find_element(By.ID, "task-title").send_keys(title, Keys.ENTER)
            wait(f"{title} listed", lambda: row(a, "task-list", title))
        a.find_element(By.ID, "task-title").send_keys("Paint the fence", Keys.ENTER)
        refusal = wait("the focus rule's refusal", lambda: a.find_element(By.ID, "focus-refusal").is_displayed() and
                       a.find_element(By.ID, "focus-refusal-text").text)[0]
        web_support.expect(f"refusal text: {refusal!r}", not ("focus" not in refusal.lower() or "3" not in refusal), "")
        active = [t for t in json.loads(cli(HOME_A, "task", "--json")) if not t["done"]]
        web_support.expect(f"the refused task was written: {active}", not (len(active) != 3 or any(t["title"] == "Paint the fence" for t in active)), "")
        web_support.expect(f"the refusal is not a sentence: {refusal!r}", not (not refusal[:1].isupper()), "")
        a.find_element(By.ID, "task-refusal-close").click()
        wait("the refusal to close", lambda: not a.find_element(By.ID, "focus-refusal").is_displayed())
        web_support.section_ok(f"the 4th active task is refused with the rule explained ({refusal!r}); nothing written")
        # "Add it anyway": the count says how far past the rule, in words (issue 52, item 16:
        # it read "(4 of 3 active)").
        title = a.find_element(By.ID, "task-title")
        if title.get_attribute("value") != "Paint the fence":  # the refused title stays, to add it anyway later
            raise Failed(f"the refused title was not kept: {title.get_attribute('value')!r}")
        title.send_keys(Keys.ENTER)
        wait("the refusal again", lambda: a.find_element(By.ID, "focus-refusal").is_displayed())
        a.find_element(By.ID, "task-force").click()
        count = wait("the count past the rule", lambda: row(a, "task-list", "Paint the fence")
                     and a.find_element(By.ID, "focus-count").text == "(4 active, at most 3)" and "(4 active, at most 3)")[0]
        web_support.section_ok(f"“Add it anyway” adds the 4th, and the focus banner says {count!r}")
        click_in_row(a, "task-list", "Paint the fence", "button.check", "the fence task done on A")
        click_in_row(a, "task-list", "Call the plumber", "button.check", "the plumber task done on A")
        wait("the task under Completed on B", lambda: row(b, "done-list", "Call the plumber"))
        web_support.section_ok("a task completed on A moves to Completed on B")

        # --- appearance: dark on A (this machine's setting), B stays light ---
        tab(a, "more")
        light = background(a)
        a.find_element(By.CSS_SELECTOR, 'input[name="appearance"][value="dark"]').click()
        wait("A's page dark", lambda: background(a) == "rgb(0, 0, 0)")
        a.refresh()
        wait("A's page still dark after a reload", lambda: a.execute_script("return document.body.dataset.ready === 'true'")
             and background(a) == "rgb(0, 0, 0)")
        web_support.expect(f"B changed too: {background(b)}", not (background(b) != light), "")
        web_support.section_ok(f"appearance dark applied on A ({light} → rgb(0, 0, 0)), kept after a reload; B's page unchanged")

        # --- More offers the household's backup as a download, from this page's own origin ---
        # Shown once More is drawn again after the reload (WebKitGTK under load draws it later).
        link = wait("the backup link shown on A",
                    lambda: (found := a.find_element(By.ID, "download-backup")).is_displayed() and found)[0]
        href = link.get_attribute("href")
        got = a.execute_script("return fetch(arguments[0]).then(r => r.arrayBuffer()).then(b => "
                               "String.fromCharCode(...new Uint8Array(b.slice(0, 15))))", href)
        web_support.expect(f"the backup link {href!r} gave {got!r}", got == "SQLite format 3", "")
        web_support.section_ok(f"More offers 'Download a backup' ({href}): a whole SQLite file")

        if SHOTS:
            screenshots(a, b)

        # --- the agent goes away: B's page says so; it comes back: B's page recovers, still signed in ---
        tab(b, "shopping")
        b.execute_script("window.__sameDocument = true")
        os.kill(int(PID_B), signal.SIGTERM)
        _, seconds = wait("B's page to show the agent unreachable", lambda: b.find_element(By.ID, "offline").is_displayed(),
                          timeout=5.0)
        web_support.section_ok(f"B's page shows the agent unreachable {seconds * 1000:.0f} ms after it stopped")
        # What is typed meanwhile is not lost: the name the agent did not take stays in its field
        # (issue 52, item 16), and Enter sends it once the agent is back.
        b.find_element(By.ID, "add-item").click()
        wait("the rapid-entry row", lambda: b.find_element(By.CSS_SELECTOR, "#shop-rapid input.rapid"))[0].send_keys("Tea", Keys.ENTER)
        kept = wait("Tea kept in the field", lambda: b.find_element(By.CSS_SELECTOR, "#shop-rapid input.rapid").get_attribute("value") == "Tea"
                    and b.find_element(By.ID, "toast").is_displayed() and b.find_element(By.ID, "toast-text").text)[0]
        restarted = subprocess.Popen([BIN, "run", "--home", HOME_B, "--port", "0", "--no-mdns", "--web",
                                      f"127.0.0.1:{WEB_PORT_B}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait("B's page back online", lambda: not b.find_element(By.ID, "offline").is_displayed(), timeout=15.0)
            field = b.find_element(By.CSS_SELECTOR, "#shop-rapid input.rapid")
            web_support.expect(f"the field lost what was typed: {field.get_attribute('value')!r}", not (field.get_attribute("value") != "Tea"), "")
            field.send_keys(Keys.ENTER)
            wait("Tea (typed while B's agent was down) on A's page", lambda: "Tea" in names(a), timeout=10.0)
            wait("the next row", lambda: b.find_element(By.CSS_SELECTOR, "#shop-rapid input.rapid"))[0].send_keys(Keys.ENTER)
            wait("rapid entry to end", lambda: not b.find_elements(By.CSS_SELECTOR, "#shop-rapid input.rapid"))
            web_support.section_ok(f"a name typed while the agent was down stays in its field ({kept!r}); Enter sends it once the agent is back")
            rapid_add(b, "Coffee")
            wait("Coffee (added on B after the restart) on A's page", lambda: "Coffee" in names(a), timeout=10.0)
            web_support.expect("B's page reloaded", not (not b.execute_script("return window.__sameDocument === true")), "")
            web_support.section_ok("B's agent restarted: its page recovered by itself, still signed in, and syncs again")
        finally:
            restarted.send_signal(signal.SIGTERM)
            restarted.wait(timeout=20)
        console = [entry for entry in a.get_log("browser") + b.get_log("browser") if entry["level"] == "SEVERE"
                   and "/api/events" not in entry["message"] and "Failed to load resource" not in entry["message"]]
        web_support.expect(f"errors in the browser console: {console}", not (console), "")
        if a.console_read:
            web_support.section_ok("no script errors in either console")
        else:
            web_support.ok(f"the consoles not read: {ENGINE}'s WebDriver gives no console log")
    finally:
        a.quit()
        b.quit()


def screenshots(a, b):
    os.makedirs(SHOTS, exist_ok=True)
    a.set_window_size(430, 900)
    b.set_window_size(430, 900)
    for driver, mode in [(b, "light"), (a, "dark")]:
        for name in ["shopping", "tasks", "backlog", "kids", "more"]:
            tab(driver, name)
            driver.execute_script("window.scrollTo(0, 0)")
            wait("the tab's fade-in to end", lambda: driver.execute_script("return document.getAnimations().length === 0"))
            driver.save_screenshot(os.path.join(SHOTS, f"{name}-{mode}.png"))
    a.set_window_size(900, 1000)
    b.set_window_size(900, 1000)
    web_support.section_ok(f"screenshots saved in {SHOTS}")


if __name__ == "__main__":
    web_support.run(main)
