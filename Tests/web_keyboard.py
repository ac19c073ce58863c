#!/usr/bin/env python3
"""A family's day with the keyboard only (issue 56, item 2), in a real browser (headless
Chromium, Selenium), from a new computer:

    web_keyboard.py PULSE_PEER HOME ENGINE [SCREENSHOT_DIR]

ENGINE is `chromium` (Selenium, chromedriver), `firefox` (Firefox ESR through Marionette) or
`webkit` (WebKitGTK, Safari's engine family, through its own WebDriver under Xvfb).

HOME is empty. Its agent (started here) welcomes; the household is started, the lists used, a
task edited, parents' mode opened with the PIN, the catalogue opened and closed, a kid's reward
taken and "Add a computer" shown and closed — by keys only (Tab, Shift+Tab, Enter, Space,
Escape, the arrows, digits and letters): no mouse event at all, no element clicked by a script.
Navigating to the sign-in link is the only thing done otherwise (the desktop launcher does it).

At every stop of the focus: the element is visible, focused visibly (`:focus-visible` with an
outline a person sees) and not hidden under anything (the floating tab bar: WCAG 2.2's 2.4.11,
"Focus Not Obscured"); a dialog keeps the focus inside it while open and gives it back to what
opened it when closed; nothing traps it elsewhere (Tab goes on to the next control and
Shift+Tab back). The CLI only furnishes the household and looks at what the keys did.
"""
import json
import os
import subprocess
import sys

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

import web_support
from web_support import Failed, expect, section_ok, wait

BIN, HOME, ENGINE = sys.argv[1:4]
SHOTS = sys.argv[4] if len(sys.argv) > 4 else None
PIN = "2580"

# What the focused element is, and whether a person sees that it is: the script's only look
# into the page (it reads, it never acts).
FOCUS = """
const e = document.activeElement;
if (!e || e === document.body) return null;
const r = e.getBoundingClientRect();
const style = getComputedStyle(e);
const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1), y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
const top = document.elementFromPoint(x, y);
const label = e.labels && e.labels[0];
const dialog = e.closest('dialog');
return {
  id: e.id, tag: e.tagName.toLowerCase(), cls: e.className || '',
  name: (e.getAttribute('aria-label') || e.textContent || e.value || e.placeholder || '').trim().replace(/\\s+/g, ' ').slice(0, 60),
  visible: r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < innerHeight && style.visibility !== 'hidden',
  ring: (e.matches(':focus-visible') || e.matches(':focus-within')) && (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2
        || (style.boxShadow && style.boxShadow !== 'none')),
  covered: !(top && (top === e || e.contains(top) || top.contains(e) || (label && (label === top || label.contains(top))))),
  coveredBy: top ? top.tagName.toLowerCase() + (top.id ? '#' + top.id : '') + (top.className ? '.' + String(top.className).split(' ')[0] : '') : null,
  dialog: dialog && dialog.open ? dialog.id : null,
  document: document.hasFocus(),
};
"""


def keys(driver, *pressed):
    if ENGINE == "firefox":
        driver.send_keys(*pressed)
    else:
        ActionChains(driver).send_keys(*pressed).perform()


def chord(driver, modifier, key):
    """A key with a modifier held (Shift+Tab, Ctrl+A)."""
    if ENGINE == "firefox":
        driver.chord(modifier, key)
    else:
        ActionChains(driver).key_down(modifier).send_keys(key).key_up(modifier).perform()


# Every mouse event a person could make, listed by the page from its start (a keyboard's Enter
# on a button makes a `click` too, with no pointer: detail 0; Firefox says the keyboard made it,
# mozInputSource 6, MOZ_SOURCE_KEYBOARD, with detail 1 on a link).
MOUSE = """
window.pulseMouse = [];
for (const kind of ['mousedown', 'mouseup', 'click', 'pointerdown', 'pointerup', 'mousemove'])
  addEventListener(kind, (e) => {
    if (e.isTrusted && (kind !== 'click' || (e.detail > 0 && e.mozInputSource !== 6)))
      window.pulseMouse.push(`${kind} on ${e.target.tagName.toLowerCase()}${e.target.id ? '#' + e.target.id : ''} (detail ${e.detail}, ${e.pointerType || e.mozInputSource || ''})`);
  }, true);"""


def navigated(driver):
    """After a navigation: the mouse watched in the new document (Chromium adds it to every
    document itself), once that document is the page's, drawn: WebKitGTK's get() can return
    on the sign-in link's document while the page's replaces it ("Callback was not called
    before the unload event", once under load)."""
    if ENGINE != "chromium":
        wait("the page drawn after the navigation", lambda: ready(driver), timeout=15)
        driver.execute_script(MOUSE)
    if ENGINE == "firefox":
        driver.execute_script("window.focus()")


def focus(driver):
    f = driver.execute_script(FOCUS)
    if f is not None and not f["document"] and ENGINE == "firefox":
        # Headless Firefox under Marionette leaves the system focus in its own toolbar once Tab
        # passed through it (or after a navigation), although the page's element took the focus:
        # the window is given it back, as a person's window has it (no event reaches the page).
        driver.execute_script("window.focus()")
        f = driver.execute_script(FOCUS)
    return f


def describe(f):
    return f"{f['tag']}#{f['id']}.{f['cls']} “{f['name']}”" if f else "nothing (the page itself)"


stops = []  # every stop of the focus in the walk, for the summary


def seen_well(f, where):
    """A stop of the focus as a person must see it: visible, visibly focused, not covered."""
    stops.append(f)
    problems = []
    if not f["visible"]:
        problems.append("not on the screen")
    if not f["ring"]:
        problems.append("no visible focus ring")
    if f["covered"]:
        problems.append(f"covered by {f['coveredBy']}")
    if problems:
        raise Failed(f"{where}: the focus on {describe(f)}: {', '.join(problems)}")


def tab_to(driver, matches, what, backwards=False, limit=120):
    """Presses Tab (Shift+Tab) until the focus is on what `matches` (a predicate of FOCUS's
    answer), checking every stop on the way; fails if it never comes (unreachable) or the focus
    stops moving (a trap)."""
    last, same = None, 0
    for _ in range(limit):
        if backwards:
            chord(driver, Keys.SHIFT, Keys.TAB)
        else:
            keys(driver, Keys.TAB)
        f = focus(driver)
        if f is None:
            continue  # past the last control, the browser's own (its address bar): then on from the top
        seen_well(f, f"on the way to {what}")
        if matches(f):
            return f
        # A date field takes a Tab for each of its parts (day, month, year): a trap only past that.
        same = same + 1 if f == last else 0
        if same > 4:
            raise Failed(f"the focus stays on {describe(f)} on the way to {what}: a trap")
        last = f
    raise Failed(f"{what} is not reached with {'Shift+' if backwards else ''}Tab ({limit} presses)")


def by_id(element_id):
    return lambda f: f["id"] == element_id


def named(text, tag="button"):
    return lambda f: f["tag"] == tag and text in f["name"]


def cli(*args):
    return web_support.cli(BIN, HOME, *args)


def cli_json(*args):
    return json.loads(cli(*args, "--json"))


def shoot(driver, name):
    if SHOTS:
        driver.save_screenshot(os.path.join(SHOTS, f"keyboard-{name}.png"))


def ready(driver):
    return driver.execute_script("return document.body.dataset.ready === 'true'")


def shown(driver, element_id):
    return driver.execute_script("const e = document.getElementById(arguments[0]); return !!e && !e.hidden && e.offsetParent !== null", element_id)


def welcome(driver, agent):
    """The first run: the welcome's form, filled and sent by keys."""
    agent.event("welcome")
    driver.get(cli("open", "--print").split()[-1])
    navigated(driver)
    wait("the welcome", lambda: shown(driver, "welcome"), timeout=15)
    f = tab_to(driver, by_id("start-household"), "the household's name")
    keys(driver, "The Smiths")
    for field, typed in [("start-me", "Anna"), ("start-others", "Tom"), ("start-computer", "Study desktop")]:
        tab_to(driver, by_id(field), field, limit=6)
        keys(driver, typed)
    tab_to(driver, lambda f: f["tag"] == "button" and "start-form" in driver.execute_script(
        "return document.activeElement.form?.id || ''"), "“Start the household”", limit=6)
    keys(driver, Keys.ENTER)
    agent.event("ready")
    wait("the household's page", lambda: ready(driver) and shown(driver, "tab-shopping"), timeout=30)
    members = [m["name"] for m in cli_json("member", "list")]
    if expect("the welcome by keys", members == ["Anna", "Tom"], f"the household made has {members}"):
        section_ok("the welcome by keys: the household's name, its members and this computer's name typed, "
                   f"“Start” pressed with Enter (first stop {describe(f)})")


def with_pin(*args):
    subprocess.run([BIN, *args, "--pin-stdin", "--home", HOME], input=f"{PIN}\n", check=True, capture_output=True, text=True, timeout=30)


def furnish():
    cli("task", "add", "Water the plants")
    with_pin("kids", "pin", "set")
    with_pin("kids", "add", "Mia")
    with_pin("kids", "select", "chore_001", "reward_001")
    with_pin("kids", "adjust", "Mia", "--add", "5", "--reason", "Birthday")
    cli("kids", "done", "Mia", "chore_001")


def skip_link(driver):
    """The first Tab on a page shows “Skip to content”; Enter moves the focus into the tab."""
    driver.refresh()
    navigated(driver)
    wait("the page again", lambda: ready(driver), timeout=15)
    keys(driver, Keys.TAB)
    f = focus(driver)
    if f is None or "skip" not in f["cls"]:
        raise Failed(f"the first Tab stops on {describe(f)}, not on “Skip to content”")
    seen_well(f, "the first Tab")
    keys(driver, Keys.ENTER)
    tab_to(driver, by_id("add-item"), "“+ Add item” after skipping", limit=8)
    section_ok("the first Tab shows “Skip to content”, and Enter on it leads into the shopping list")


def shopping(driver):
    """+ Add item, Milk and Bread typed in the rapid-entry row, Milk checked with Space."""
    keys(driver, Keys.ENTER)
    wait("the rapid-entry row focused", lambda: "rapid" in (focus(driver) or {}).get("cls", ""))
    keys(driver, "Milk", Keys.ENTER)
    wait("Milk listed", lambda: "Milk" in cli("shop", "list"))
    wait("the next row focused", lambda: "rapid" in (focus(driver) or {}).get("cls", ""))
    keys(driver, "Bread", Keys.ENTER)
    wait("Bread listed", lambda: "Bread" in cli("shop", "list"))
    keys(driver, Keys.ENTER)  # the empty row ends the entry
    f = tab_to(driver, lambda f: f["tag"] == "button" and "check" in f["cls"] and "Milk" in f["name"], "Milk's check button")
    keys(driver, Keys.SPACE)
    wait("Milk in the restock pool", lambda: "Milk" in cli("shop", "list", "--restock"), timeout=10)
    expect("Milk checked by Space only", "Milk" not in cli("shop", "list"), "Milk is still on the list")
    # Milk's row went to the restock pool: the focus goes to the row now in its place (Bread's).
    wait("the list redrawn", lambda: "Milk" not in driver.execute_script("return document.getElementById('shop-list').textContent"), timeout=10)
    after = focus(driver)
    if expect("the focus stays in the list when its row leaves", after is not None and "check" in after["cls"] and "Bread" in after["name"],
              f"after Milk left the list the focus is on {describe(after)}"):
        seen_well(after, "after Milk left the list")
        # Another computer's change redraws the list (the live feed): the focus stays where it is.
        cli("shop", "add", "Eggs")
        wait("Eggs shown live", lambda: "Eggs" in driver.execute_script("return document.getElementById('shop-list').textContent"), timeout=10)
        live = focus(driver)
        expect("the focus stays through a live update", live is not None and live["name"] == after["name"],
               f"after Eggs came live the focus is on {describe(live)}")
    shoot(driver, "shopping")
    section_ok(f"shopping by keys: “+ Add item” with Enter, Milk and Bread typed (Enter after each), Milk checked with Space ({describe(f)})")


def tab_bar(driver, to):
    """The tab bar is one stop (the selected tab); the arrows move along it."""
    f = tab_to(driver, lambda f: f["tag"] == "button" and f["id"].startswith("t-"), "the tab bar", backwards=True)
    order = driver.execute_script("return [...document.querySelectorAll('.tabbar [role=tab]')].map((b) => b.id.slice(2))")
    at = f["id"][2:]
    while at != to:
        keys(driver, Keys.ARROW_RIGHT)
        at = wait("the next tab", lambda: (focus(driver) or {}).get("id", "")[2:] if (focus(driver) or {}).get("id", "").startswith("t-") else None)[0]
        seen_well(focus(driver), f"the {at} tab's button")
    wait(f"the {to} tab shown", lambda: shown(driver, f"tab-{to}"))
    selected = driver.execute_script("return document.getElementById(arguments[0]).getAttribute('aria-selected')", f"t-{to}")
    expect(f"the {to} tab selected by the arrows", selected == "true", f"aria-selected is {selected}")
    return order


def tasks(driver):
    """A task added and another edited in place: its title changed, kept with Enter."""
    tab_bar(driver, "tasks")
    tab_to(driver, by_id("task-title"), "the new task's title")
    keys(driver, "Call the plumber", Keys.ENTER)
    wait("the task added", lambda: "Call the plumber" in cli("task", "list"), timeout=10)
    tab_to(driver, lambda f: "edit" in f["cls"] and "Water the plants" in f["name"], "“Edit Water the plants”")
    keys(driver, Keys.ENTER)
    wait("the task's title field focused", lambda: driver.execute_script(
        "return document.activeElement.name === 'title' && !!document.activeElement.closest('.task-edit')"))
    seen_well(focus(driver), "the task's title field")
    chord(driver, Keys.CONTROL, "a")
    keys(driver, "Water the garden", Keys.ENTER)
    wait("the title kept", lambda: "Water the garden" in cli("task", "list"), timeout=10)
    f = focus(driver)
    if expect("the focus kept after an edit", f is not None, "the focus was lost (on the page itself) after the edit was kept"):
        seen_well(f, "after the edit")
    shoot(driver, "tasks")
    section_ok("tasks by keys: a task added with Enter, another edited in place (Enter, its title retyped, Enter), "
               f"the focus kept on {describe(f)}")


def parents(driver):
    """Parents' mode by the PIN typed on the keypad, the catalogue opened (the focus kept inside
    it) and closed with Escape (the focus back on its button), then locked again."""
    tab_bar(driver, "kids")
    opener = tab_to(driver, by_id("parents-open"), "🔒 Parents")
    keys(driver, Keys.ENTER)
    wait("the keypad", lambda: driver.execute_script("return document.getElementById('pin-pad').open"))
    f = focus(driver)
    expect("the keypad takes the focus", f is not None and f["dialog"] == "pin-pad", f"the focus is on {describe(f)}")
    keys(driver, "1111")
    wait("a wrong PIN said", lambda: driver.execute_script("return document.getElementById('pin-error').textContent !== ''"), timeout=10)
    keys(driver, PIN)
    wait("parents' mode", lambda: shown(driver, "parents-panel"), timeout=10)
    f = focus(driver)
    if expect("the focus after the keypad", f is not None, "the focus was lost (on the page itself) when the keypad closed"):
        seen_well(f, "after the keypad")
    button = tab_to(driver, lambda f: "catalogue-open" in f["cls"], "“Chores…”")
    keys(driver, Keys.ENTER)
    wait("the catalogue", lambda: driver.execute_script("return document.getElementById('catalogue-modal').open"))
    inside = []
    for _ in range(25):
        keys(driver, Keys.TAB)
        f = focus(driver)
        inside.append(f and f["dialog"])
        if f is not None:
            seen_well(f, "in the catalogue")
    # None: the browser's own controls, which a modal dialog lets Tab reach (and leave) as the
    # platform's dialogs do; never the page under it.
    expect("the catalogue keeps the focus", all(d in ("catalogue-modal", None) for d in inside) and inside.count(None) <= 2,
           f"Tab left the open catalogue: {inside}")
    shoot(driver, "catalogue")
    keys(driver, Keys.ESCAPE)
    wait("the catalogue closed", lambda: not driver.execute_script("return document.getElementById('catalogue-modal').open"))
    back = focus(driver)
    expect("Escape gives the focus back to the catalogue's button", back is not None and back["name"] == button["name"],
           f"after Escape the focus is on {describe(back)}")
    tab_to(driver, by_id("parents-lock"), "🔓 Lock", backwards=True)
    keys(driver, Keys.ENTER)
    wait("parents' mode locked", lambda: not shown(driver, "parents-panel"))
    f = focus(driver)
    if expect("the focus after locking", f is not None, "the focus was lost (on the page itself) when parents' mode locked"):
        seen_well(f, "after locking")
    section_ok(f"parents' mode by keys: {describe(opener)} with Enter, a wrong PIN said, the PIN typed; the catalogue keeps the focus "
               "for 25 Tabs and Escape gives it back to its button; locked with Enter")


def dialogs(driver):
    """The confirming dialog (More → a member's ✕) and the PIN reset (from the keypad): each takes
    the focus, closes on Escape and on its own button, and gives the focus back to what opened
    it; closing changes nothing."""
    tab_bar(driver, "more")
    opener = tab_to(driver, lambda f: f["tag"] == "button" and f["name"] == "Remove Tom", "Tom's ✕ (Remove Tom)")
    before = [m["name"] for m in cli_json("member", "list")]
    for how in ["Escape", "Cancel"]:
        keys(driver, Keys.ENTER)
        wait("the confirming dialog", lambda: driver.execute_script("return document.getElementById('confirm').open"))
        f = focus(driver)
        expect(f"the confirming dialog takes the focus ({how})", f is not None and f["dialog"] == "confirm", f"the focus is on {describe(f)}")
        if how == "Escape":
            keys(driver, Keys.ESCAPE)
        else:
            tab_to(driver, by_id("confirm-cancel"), "Cancel", limit=6)
            keys(driver, Keys.ENTER)
        wait("the confirming dialog closed", lambda: not driver.execute_script("return document.getElementById('confirm').open"))
        back = focus(driver)
        if expect(f"{how} gives the focus back to Tom's ✕", back is not None and back["name"] == opener["name"],
                  f"after {how} the focus is on {describe(back)}"):
            seen_well(back, f"after {how} in the confirming dialog")
    after = [m["name"] for m in cli_json("member", "list")]
    expect("closing the confirming dialog removed nobody", after == before, f"members {before} → {after}")
    tab_bar(driver, "kids")
    opener = tab_to(driver, by_id("parents-open"), "🔒 Parents")
    keys(driver, Keys.ENTER)
    wait("the keypad", lambda: driver.execute_script("return document.getElementById('pin-pad').open"))
    tab_to(driver, by_id("pin-forgot-pad"), "“Forgot the PIN?”", limit=20)
    keys(driver, Keys.ENTER)
    wait("the PIN reset", lambda: driver.execute_script("return document.getElementById('pin-reset').open"))
    f = focus(driver)
    expect("the PIN reset takes the focus", f is not None and f["dialog"] == "pin-reset", f"the focus is on {describe(f)}")
    shoot(driver, "pin-reset")
    keys(driver, Keys.ESCAPE)
    wait("the PIN reset closed", lambda: not driver.execute_script("return document.getElementById('pin-reset').open"))
    back = focus(driver)
    if expect("Escape gives the focus back to 🔒 Parents", back is not None and back["id"] == opener["id"],
              f"after Escape the focus is on {describe(back)}"):
        seen_well(back, "after the PIN reset")
    section_ok("dialogs by keys: the confirming dialog of a member's ✕ (Escape, then Cancel) and the PIN reset from the keypad (Escape) "
               "take the focus and give it back to their button; nobody removed")


def reward(driver):
    """Mia's reward taken with Enter, from the Rewards view reached by keys."""
    tab_to(driver, lambda f: f["tag"] == "button" and f["name"] in ("Rewards",), "the Rewards view")
    keys(driver, Keys.ENTER)
    f = tab_to(driver, lambda f: "row-button" not in f["cls"] and f["tag"] == "button"
               and driver.execute_script("return !!document.activeElement.closest('#kid-cards')"), "a reward's card")
    before = cli("kids", "basket", "Mia")
    balance = driver.execute_script("return document.getElementById('kid-balance').textContent")
    keys(driver, Keys.ENTER)
    wait("the reward in Mia's basket", lambda: cli("kids", "basket", "Mia") != before, timeout=10)
    wait("Mia's balance redrawn", lambda: driver.execute_script("return document.getElementById('kid-balance').textContent") != balance, timeout=10)
    after = focus(driver)
    expect("the focus stays on the reward after the redraw", after is not None and after["name"] == f["name"],
           f"after the reward the focus is on {describe(after)}")
    shoot(driver, "reward")
    section_ok(f"a reward taken for Mia with Enter on {describe(f)}")


def add_computer(driver):
    """More → Add a computer: the code shown; Done gives the focus back to the button."""
    tab_bar(driver, "more")
    tab_to(driver, by_id("add-computer"), "“Add a computer”")
    keys(driver, Keys.ENTER)
    wait("the code", lambda: shown(driver, "pairing") and driver.execute_script(
        "return /^[0-9A-Z-]{4,}$/.test(document.getElementById('pairing-code').textContent.trim())"), timeout=10)
    shoot(driver, "add-computer")
    live = driver.execute_script("const c = document.getElementById('pairing-countdown'); return [c.getAttribute('role'), c.getAttribute('aria-live')]")
    expect("the countdown is a timer, not read out each second", live == ["timer", None], f"the countdown's role and aria-live: {live}")
    tab_to(driver, by_id("pairing-close"), "“Done”")
    keys(driver, Keys.ENTER)
    wait("the code hidden", lambda: not shown(driver, "pairing"))
    f = focus(driver)
    if expect("“Done” gives the focus back to “Add a computer”", f is not None and f["id"] == "add-computer",
              f"after Done the focus is on {describe(f)}"):
        seen_well(f, "after Done")
        section_ok("Add a computer by keys: the code shown with Enter, “Done” with Enter, the focus back on “Add a computer”")


def main():
    driver = web_support.open_browser(ENGINE, 1366, 900)
    agent = web_support.Agent(BIN, HOME, "--web", "127.0.0.1:0")
    if ENGINE == "chromium":
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": MOUSE})
    try:
        welcome(driver, agent)
        furnish()
        skip_link(driver)
        shopping(driver)
        web_support.check("tasks by keys", lambda: tasks(driver))
        web_support.check("parents' mode by keys", lambda: parents(driver))
        web_support.check("a reward by keys", lambda: reward(driver))
        web_support.check("dialogs by keys", lambda: dialogs(driver))
        web_support.check("Add a computer by keys", lambda: add_computer(driver))
        mouse = driver.execute_script("return window.pulseMouse")
        if expect("no mouse event", mouse == [], f"mouse events in the walk: {mouse} (None: the page loaded anew, uncounted)"):
            section_ok(f"no mouse event in the whole walk ({ENGINE}): {len(stops)} stops of the focus, each visible, ringed and uncovered")
    finally:
        driver.quit()
        agent.stop()


if __name__ == "__main__":
    web_support.run(main)
