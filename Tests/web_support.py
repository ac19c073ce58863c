"""What the web page's browser tests share (Tests/web_e2e.py, Tests/web_security.py):
the browser, the one way to wait (a condition polled under a deadline), the CLI, and how a
script reports its checks."""
import subprocess
import sys
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


def cli(binary, home, *args):
    return subprocess.run([binary, *args, "--home", home], check=True, capture_output=True, text=True, timeout=30).stdout


def browser(width=900, height=1000):
    """Headless Debian Chromium through its own chromedriver (Selenium must not fetch one)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}"]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def run(main):
    """Runs a script's checks: each prints `ok …`; the first failure prints `FAILED: …`, exit 1."""
    try:
        main()
    except Failed as failure:
        print(f"FAILED: {failure}")
        sys.exit(1)
