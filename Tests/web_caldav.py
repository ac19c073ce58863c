#!/usr/bin/python3
"""Issue 59: Debian's vdirsyncer syncs the household's lists both ways with a directory, where
Debian's todoman edits them, against computer A's CalDAV service; each change is on computer B's
page (Chromium) within a second of the sync that sent it, and a change made on B's page reaches
the directory at the next sync. Then the conflict walk: A and B cut off from each other (both
agents restarted on new sync ports, so that neither reaches the other where it remembers it), the
same item renamed on B's page and by todoman through A; B told A's new address: the household's
merge rule decides (the later rename; the other in the conflict log), both computers and B's page
show it, and so does the directory after its next sync.

  web_caldav.py BIN HOME_A HOME_B PID_A PID_B WEB_PORT_B PORT CA PASSWORD WORK

A and B are one household, their agents PID_A and PID_B syncing, B's serving its page on
WEB_PORT_B; A serves CalDAV on PORT (its certificate under the household CA, CA); PASSWORD is an app
password of Tom's; WORK a directory for vdirsyncer's and todoman's files. Prints `ok …` per check;
the agents it restarts it stops.
"""
import base64
import http.client
import json
import os
import re
import shlex
import socket
import signal
import ssl
import subprocess
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import web_support
from web_support import Failed, names, tab, wait

BIN, HOME_A, HOME_B, PID_A, PID_B, WEB_PORT_B, PORT, CA, PASSWORD, WORK = sys.argv[1:11]
# The longest a change may take from the end of the sync that sent it to B's page.
WITHIN = 1.0


def cli(home, *args):
    return web_support.cli(BIN, home, *args)


def server():
    """The name A serves CalDAV under, as an app is told (`caldav status`): its `.local` name,
    which its certificate names; resolved to this machine by vdirsyncer as a computer's resolver
    would (``RESOLVE``: this machine's resolver may not answer `.local` names). vdirsyncer trusts the
    household's CA, not the certificate's fingerprint: the agent makes itself a new certificate
    as it starts and as its addresses change, so a pinned fingerprint would break."""
    addresses = json.loads(cli(HOME_A, "caldav", "status", "--json")).get("addresses", [])
    for address in addresses:
        host = address.split("//", 1)[1].rsplit(":", 1)[0]
        if host.endswith(".local") and address.endswith(f":{PORT}/dav/"):
            return host
    raise Failed(f"A's CalDAV is given no .local name: {addresses}")


RESOLVE = os.path.join(WORK, "resolve")


def resolver():
    """A `sitecustomize` for vdirsyncer's Python: the `.local` name is this machine (as
    Tests/caldav_client.py resolves it in its own process)."""
    os.makedirs(RESOLVE, exist_ok=True)
    with open(os.path.join(RESOLVE, "sitecustomize.py"), "w") as f:
        f.write(f"""import socket
_real = socket.getaddrinfo


def _resolve(host, *args, **kwargs):
    return _real("127.0.0.1" if host == {server()!r} else host, *args, **kwargs)


socket.getaddrinfo = _resolve
""")


def sync_token():
    """The shopping list's `DAV:sync-token` (RFC 6578), read as Tom's app reads it: its principal
    from `/dav/`, then a PROPFIND of the list."""
    context = ssl.create_default_context(cafile=CA)
    host = server()
    credentials = base64.b64encode(f"Tom:{PASSWORD}".encode()).decode()

    def propfind(path, prop):
        connection = http.client.HTTPSConnection(host, int(PORT), context=context, timeout=10)
        connection.sock = context.wrap_socket(socket.create_connection(("127.0.0.1", int(PORT)), timeout=10), server_hostname=host)
        try:
            connection.request("PROPFIND", path, body=f'<?xml version="1.0"?><propfind xmlns="DAV:"><prop><{prop}/></prop></propfind>',
                               headers={"Depth": "0", "Authorization": f"Basic {credentials}", "Content-Type": "application/xml"})
            answer = connection.getresponse()
            text = answer.read().decode()
        finally:
            connection.close()
        if answer.status != 207:
            raise Failed(f"PROPFIND {path} answered {answer.status}: {text[:300]}")
        return text
    principal = re.search(r"current-user-principal>\s*<(?:\w+:)?href>([^<]+)<", propfind("/dav/", "current-user-principal"))
    if principal is None:
        raise Failed("no current-user-principal at /dav/")
    token = re.search(r"sync-token>([^<]+)<", propfind(principal.group(1) + "lists/shopping/", "sync-token"))
    if token is None:
        raise Failed("the shopping list has no sync-token")
    return token.group(1)


def configure():
    resolver()
    os.makedirs(os.path.join(WORK, "xdg/todoman"), exist_ok=True)
    with open(os.path.join(WORK, "config"), "w") as f:
        f.write(f"""[general]
status_path = "{WORK}/status/"

[pair household]
a = "household_remote"
b = "household_local"
collections = ["from a"]
conflict_resolution = "a wins"
metadata = ["displayname"]

[storage household_remote]
type = "caldav"
url = "https://{server()}:{PORT}/"
username = "Tom"
password = "{PASSWORD}"
verify = "{CA}"
item_types = ["VTODO"]

[storage household_local]
type = "filesystem"
path = "{WORK}/lists/"
fileext = ".ics"
""")
    # default_due = 0: todoman dates a new to-do a day ahead unless told not to, and a shopping
    # item has no due day (the service refuses one, in words).
    with open(os.path.join(WORK, "xdg/todoman/config.py"), "w") as f:
        f.write(f"""path = "{WORK}/lists/*"
date_format = "%Y-%m-%d"
time_format = "%H:%M"
default_list = "Shopping list"
default_due = 0
cache_path = "{WORK}/todoman.sqlite3"
""")


def environment():
    return dict(os.environ, VDIRSYNCER_CONFIG=os.path.join(WORK, "config"), XDG_CONFIG_HOME=os.path.join(WORK, "xdg"), PYTHONPATH=RESOLVE)


def vdirsyncer(command):
    """A vdirsyncer command (its questions answered yes: discover creates the local side)."""
    result = subprocess.run(["vdirsyncer", command], input="y\n" * 40, capture_output=True, text=True, env=environment(), timeout=120)
    if result.returncode != 0:
        raise Failed(f"vdirsyncer {command} exited {result.returncode}: {(result.stdout + result.stderr)[-4000:]}")
    return result.stdout + result.stderr


def todoman(*args, editor=None):
    env = environment()
    if editor:
        env["EDITOR"] = editor
    result = subprocess.run(["todoman", *args], capture_output=True, text=True, env=env, timeout=60)
    if result.returncode != 0:
        raise Failed(f"todoman {' '.join(args)} exited {result.returncode}: {result.stdout[-1000:]} {result.stderr[-1000:]}")
    return result.stdout


def todos():
    return json.loads(todoman("--porcelain", "list", "--status", "ANY"))


def todo(summary, in_list="Shopping list"):
    return next((t for t in todos() if t["summary"] == summary and t["list"] == in_list), None)



def shown_within(driver, what, condition):
    """The sync that sends a change, then B's page until it shows it: the milliseconds, at most
    WITHIN seconds."""
    vdirsyncer("sync")
    _, seconds = wait(f"{what} on B's page", condition, timeout=10.0)
    if seconds > WITHIN:
        raise Failed(f"{what} took {seconds * 1000:.0f} ms to reach B's page (at most {WITHIN * 1000:.0f})")
    return seconds * 1000


def rename(in_list, old, new):
    """todoman's raw edit, its editor a sed that renames the to-do (as a person's editor would)."""
    found = todo(old, in_list)
    if found is None:
        raise Failed(f"{old!r} is not in todoman's {in_list!r}: {todos()}")
    script = f"s/^SUMMARY:{old}\\r\\?$/SUMMARY:{new}/"
    todoman("edit", "--raw", str(found["id"]), editor=f"sed -i {shlex.quote(script)}")


def main():
    configure()
    vdirsyncer("discover")
    vdirsyncer("metasync")
    vdirsyncer("sync")
    have = todos()
    if todo("Milk") is None or todo("Bread") is None:
        raise Failed(f"the first sync did not bring the shopping list: {have}")
    web_support.ok(f"vdirsyncer syncs the household's lists into a directory ({', '.join(sorted({t['list'] for t in have}))}), read and written")

    driver = web_support.browser()
    restarted = []
    try:
        driver.get(cli(HOME_B, "open", "--print").split()[-1])
        wait("B's page", lambda: driver.execute_script("return document.body.dataset.ready === 'true'"), timeout=15)
        wait("Milk and Bread on B's page", lambda: {"Milk", "Bread"} <= set(names(driver, "shop-list")))

        # Each of todoman's changes, synced: on B's page within a second.
        timings = []
        todoman("new", "-l", "Shopping list", "Eggs")
        timings.append(("Eggs added", shown_within(driver, "Eggs", lambda: "Eggs" in names(driver, "shop-list"))))
        todoman("done", str(todo("Milk")["id"]))
        timings.append(("Milk ticked off", shown_within(driver, "Milk bought (gone from the list)", lambda: "Milk" not in names(driver, "shop-list"))))
        rename("Shopping list", "Bread", "Rye bread")
        timings.append(("Bread renamed", shown_within(driver, "Rye bread", lambda: "Rye bread" in names(driver, "shop-list")
                                                      and "Bread" not in names(driver, "shop-list"))))
        todoman("delete", "--yes", str(todo("Eggs")["id"]))
        timings.append(("Eggs deleted", shown_within(driver, "Eggs gone", lambda: "Eggs" not in names(driver, "shop-list"))))
        tab(driver, "tasks")
        todoman("new", "-l", "Tom's tasks", "Wash the car")
        timings.append(("a task of Tom's added", shown_within(driver, "Wash the car", lambda: "Wash the car" in names(driver, "task-list"))))
        web_support.ok("todoman's changes, synced by vdirsyncer, are on the other computer's page within a second: "
                       + ", ".join(f"{what} {ms:.0f} ms" for what, ms in timings))
        car = next((t for t in json.loads(cli(HOME_B, "task", "list", "--json")) if t.get("title") == "Wash the car"), None)
        web_support.expect(f"the task added to Tom's tasks is not Tom's on B: {car}", car is not None and car.get("assignee") == "Tom", "")

        # A change on B's page reaches the directory at the next sync, and the list's token moves.
        before = sync_token()
        tab(driver, "shopping")
        driver.find_element(By.ID, "add-item").click()
        field = wait("the rapid-entry row", lambda: driver.find_element(By.CSS_SELECTOR, "#shop-rapid input.rapid"))[0]
        field.send_keys("Butter\n")
        wait("Butter on B's page", lambda: "Butter" in names(driver, "shop-list"))
        wait("Butter on A", lambda: "Butter" in cli(HOME_A, "shop", "list"), timeout=10)
        vdirsyncer("sync")
        butter = todo("Butter")
        if butter is None or butter["completed"]:
            raise Failed(f"Butter, added on B's page, is not open in todoman after the next sync: {todos()}")
        after = sync_token()
        web_support.expect(f"the shopping list's sync token did not move: {before} → {after}", after != before, "")
        web_support.section_ok(f"an item added on the other computer's page is in todoman's list at vdirsyncer's next sync, "
                               f"and the list's sync token moved ({before.rsplit(':', 1)[-1]} → {after.rsplit(':', 1)[-1]})")

        # The conflict walk: A and B cut off from each other, the same item renamed on B's page and
        # by todoman through A; then B told where A is.
        for pid in (PID_A, PID_B):
            os.kill(int(pid), signal.SIGTERM)
        wait("B's page to show its agent stopped", lambda: driver.find_element(By.ID, "offline").is_displayed(), timeout=10)
        alone_a = web_support.Agent(BIN, HOME_A, "--web", "127.0.0.1:0")
        restarted.append(alone_a)
        alone_a.event("ready")
        wait("CalDAV served again on A", lambda: json.loads(cli(HOME_A, "caldav", "status", "--json")).get("served"), timeout=30)
        alone_b = web_support.Agent(BIN, HOME_B, "--web", f"127.0.0.1:{WEB_PORT_B}")
        restarted.append(alone_b)
        alone_b.event("ready")
        wait("B's page back, B alone", lambda: not driver.find_element(By.ID, "offline").is_displayed(), timeout=15)
        for home in (HOME_A, HOME_B):
            peers = json.loads(cli(home, "status", "--json")).get("peers", [])
            if any(p.get("state") == "connected" for p in peers):
                raise Failed(f"{home}, restarted, is still connected to the other: {peers}")
        rename("Shopping list", "Butter", "Salted butter")
        vdirsyncer("sync")
        wait("A renamed by the app", lambda: "Salted butter" in cli(HOME_A, "shop", "list"), timeout=10)
        edit_on_page(driver, "Butter", "Unsalted butter")
        wait("B renamed on its page", lambda: "Unsalted butter" in cli(HOME_B, "shop", "list"), timeout=10)
        if "Unsalted butter" in cli(HOME_A, "shop", "list"):
            raise Failed("A has B's rename while they were cut off")
        alone_b.stop()
        together = web_support.Agent(BIN, HOME_B, "--web", f"127.0.0.1:{WEB_PORT_B}", "--peer", f"127.0.0.1:{alone_a.event('ready')['port']}")
        restarted.append(together)
        wait("B back with A: both keep the later rename", lambda: "Unsalted butter" in cli(HOME_A, "shop", "list")
             and "Salted butter" not in cli(HOME_A, "shop", "list").replace("Unsalted butter", ""), timeout=30)
        wait("B's page shows it", lambda: "Unsalted butter" in names(driver, "shop-list"), timeout=15)
        conflicts = cli(HOME_A, "conflicts")
        web_support.expect(f"the rename the merge overwrote is not in A's conflict log: {conflicts}", "Salted butter" in conflicts, "")
        vdirsyncer("sync")
        seen = todo("Unsalted butter")
        web_support.expect(f"todoman does not show the household's result after the next sync: {todos()}",
                           seen is not None and todo("Salted butter") is None, "")
        web_support.section_ok("the same item renamed on a cut-off computer's page and by todoman: the later rename wins on both "
                               "computers, the other is in the conflict log, and todoman shows the result after its next sync")
    finally:
        for agent in restarted:
            if agent.process.poll() is None:
                web_support.end_process(agent.process)
        driver.quit()


def edit_on_page(driver, old, new):
    """Renames a shopping item on the page as a person does: its name tapped, the field edited,
    Enter. The page's data arriving meanwhile (its agent just restarted) waits for the field to be
    left, as a person typing expects (page.js)."""
    def open_field():
        fields = driver.find_elements(By.CSS_SELECTOR, "#shop-list input.edit")
        if fields:
            return fields[0]
        for li in driver.find_elements(By.CSS_SELECTOR, "#shop-list li[data-id]"):
            if li.find_element(By.CSS_SELECTOR, ".name").get_attribute("textContent") == old:
                li.find_element(By.CSS_SELECTOR, ".name").click()
                break
        return None
    field = wait(f"{old}'s rename field", open_field)[0]
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(new + "\n")
    try:
        wait(f"{new} on the page", lambda: new in names(driver, "shop-list"))
    except Failed as failure:
        raise Failed(f"{failure}; the page's list: {names(driver, 'shop-list')}, B's: {cli(HOME_B, 'shop', 'list')!r}") from None


if __name__ == "__main__":
    web_support.run(main)
