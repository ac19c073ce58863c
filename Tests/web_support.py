"""What the web page's browser tests share (Tests/web_e2e.py, Tests/web_security.py):
the browser, the one way to wait (a condition polled under a deadline), the CLI, and how a
script reports its checks."""
import json
import queue
import subprocess
import sys
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


class Failed(Exception):
    pass


def wait(what, condition, timeout=5.0):
    """Polls `condition` until it returns something true (a query failing while the DOM
    changes counts as not yet); returns it and the seconds it took, or raises Failed."""
    start = time.monotonic()
    last = None
    while time.monotonic() - start < timeout:
        try:
            last = condition()
        except Exception as error:
            last = error
        if last and not isinstance(last, Exception):
            return last, time.monotonic() - start
        time.sleep(0.02)  # the polling interval of this deadline-bounded wait
    raise Failed(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class Agent:
    """`pulse-peer run` on a home, its standard output's JSON lines read as they come."""

    def __init__(self, binary, home, *args):
        self.process = subprocess.Popen([binary, "run", "--home", home, "--port", "0", "--no-mdns", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.seen = []

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line)

    def event(self, name, timeout=30.0):
        """The first line of this event (`welcome`, `ready`), waiting for it."""
        def found():
            while not self.lines.empty():
                try:
                    self.seen.append(json.loads(self.lines.get_nowait()))
                except ValueError:
                    pass
            return next((e for e in self.seen if e.get("event") == name), None)
        return wait(f"the agent's {name} line", found, timeout=timeout)[0]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)


def cli(binary, home, *args):
    return subprocess.run([binary, *args, "--home", home], check=True, capture_output=True, text=True, timeout=30).stdout


def browser(width=900, height=1000, accept_language=None):
    """Headless Debian Chromium through its own chromedriver (Selenium must not fetch one);
    `accept_language`: the browser's languages (else its default)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}"]:
        options.add_argument(arg)
    if accept_language:
        options.add_argument(f"--lang={accept_language.split(',')[0]}")
        options.add_experimental_option("prefs", {"intl.accept_languages": accept_language})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def run(main):
    """Runs a script's checks: each prints `ok …`. A failure that stops the script (`Failed`
    raised: what comes after needs what failed) prints `FAILED: …`; a check's own failure
    (``check``, ``expect``) is printed and the script goes on. Exit 1 if anything failed."""
    try:
        main()
    except Failed as failure:
        print(f"FAILED: {failure}")
        if failures:
            print(f"(and before it: {', '.join(failures)})")
        sys.exit(1)
    if failures:
        print(f"{len(failures)} check(s) failed: {', '.join(failures)}")
        sys.exit(1)


failures = []


def ok(message):
    print(f"ok {message}", flush=True)


def check(name, function):
    """One check of a script whose checks are independent: a failure is said (`FAILED: name:
    why`, kept in `failures`) and the script's next check still runs. Returns whether it passed."""
    try:
        function()
        return True
    except Exception as error:  # a check's failure, whatever raised it
        failures.append(name)
        print(f"FAILED: {name}: {error}", flush=True)
        return False
    finally:
        _said[0] = len(failures)  # the next check's parts are judged by their own failures


def expect(name, condition, why):
    """A check that is one condition: when false, said as failed (`FAILED: name: why`, kept in
    `failures`) and the script goes on. Returns the condition."""
    if not condition:
        failures.append(name)
        print(f"FAILED: {name}" + (f": {why}" if why else ""), flush=True)
    return condition


_said = [0]


def section_ok(message):
    """The `ok` of a part of a script, said only when none of its checks failed since the last
    part's (``expect``, ``check``)."""
    if len(failures) == _said[0]:
        print(f"ok {message}", flush=True)
    _said[0] = len(failures)
