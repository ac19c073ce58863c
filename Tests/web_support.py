"""What the web page's browser tests share (Tests/web_e2e.py, Tests/web_security.py):
the browser, the one way to wait (a condition polled under a deadline), the CLI, and how a
script reports its checks."""
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

# A script started by the Swift tests inherits the signal mask of the thread that started it (a
# libdispatch worker: nearly every signal blocked), and so would every program it starts: a
# browser asked to end (SIGTERM) would not hear it, and each quit would wait out its deadline
# (Firefox's took 20 s). The script and its children get the ordinary, empty mask.
signal.pthread_sigmask(signal.SIG_SETMASK, [])


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


def names(driver, list_id="shop-list"):
    """The names a list of the page shows (its rows that are not leaving)."""
    return driver.execute_script(
        f"return [...document.querySelectorAll('#{list_id} li[data-id]:not(.leaving) .name')].map(n => n.textContent)")


def tab(driver, name):
    """The page's tab `name`, chosen as a person does, once shown."""
    driver.find_element(By.ID, f"t-{name}").click()
    wait(f"the {name} tab", lambda: driver.find_element(By.ID, f"tab-{name}").is_displayed())


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


def end_process(process, timeout=20):
    """Ends a program started here: asked (SIGTERM), then made (SIGKILL) if it does not end in
    `timeout` seconds; always reaped."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def accepts(port, host="127.0.0.1"):
    """Whether something listens on this port (a driver started here)."""
    try:
        socket.create_connection((host, port), timeout=1).close()
        return True
    except OSError:
        return False


class WebKitElement(WebElement):
    """WebKitGTK's elements, whose WebDriver text leaves out what a person sees: a computer's
    name in More (a `.name` whose overflow is hidden, beside blocks) was missing from its row's
    text, and the row's lines ran together. The text is the element's rendered text
    (`innerText`, its ends trimmed) when it has a box on the page and is not hidden, as
    Selenium's is on the other engines."""

    @property
    def text(self):
        return self.parent.execute_script(
            "const e = arguments[0]; return e.getClientRects().length && getComputedStyle(e).visibility === 'visible'"
            " ? e.innerText.trim() : ''", self)


_LOCALES = os.path.join(tempfile.gettempdir(), "pulse-test-locales")


def _locale(accept_language):
    """The locale WebKitGTK takes its languages from (its Accept-Language is its locale's:
    LC_CTYPE), made for this test in a directory of its own (LOCPATH, from Debian's `locales`
    sources): the machine's own locales are left as they are."""
    tag = accept_language.split(",")[0].split(";")[0].strip()
    language, _, region = tag.partition("-")
    name = f"{language.lower()}_{(region or {'en': 'US'}.get(language.lower(), language)).upper()}.UTF-8"
    if not os.path.isdir(os.path.join(_LOCALES, name)):
        os.makedirs(_LOCALES, exist_ok=True)
        subprocess.run(["localedef", "-i", name.split(".")[0], "-f", "UTF-8", os.path.join(_LOCALES, name)],
                       check=True, capture_output=True, timeout=60)
    return name


def webkit(width=900, height=1000, accept_language=None):
    """WebKitGTK (Safari's engine family) through its own WebDriver (Debian's webkit2gtk-driver),
    under an Xvfb display of its own; `quit()` ends the browser, the driver and the display.
    Its languages are its locale's (`_locale`, from `accept_language`'s first). Its WebDriver has no
    console log: `get_log("browser")` gives nothing, and `console_read` says so."""
    home = tempfile.mkdtemp(prefix="pulse-webkit-")
    environment = {**os.environ, "HOME": home}
    if accept_language:
        environment.update(LOCPATH=_LOCALES, LC_ALL=_locale(accept_language))
    # The display is Xvfb's own choice of a free one (-displayfd): two browsers started at once
    # never share one (the first to end would take the other's display, and its session, along).
    read, write = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
                            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    processes = [xvfb]

    def end():
        for process in reversed(processes):
            end_process(process, timeout=5)
        shutil.rmtree(home, ignore_errors=True)

    try:
        with os.fdopen(read) as said:
            number = said.readline().strip()
        if not number.isdigit():
            raise Failed(f"Xvfb gave no display (exit status {xvfb.poll()})")
        environment["DISPLAY"] = f":{number}"
        port = free_port()
        processes.append(subprocess.Popen(["WebKitWebDriver", "--host=127.0.0.1", f"--port={port}"], env=environment,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    except BaseException:
        end()
        raise

    try:
        wait("WebKitWebDriver", lambda: accepts(port), timeout=20)
        driver = webdriver.Remote(command_executor=f"http://127.0.0.1:{port}", options=webdriver.WebKitGTKOptions())
        driver._web_element_cls = WebKitElement
        driver.set_window_size(width, height)
    except BaseException:
        end()
        raise
    quit_driver = driver.quit

    def quit():
        try:
            quit_driver()
        finally:
            end()
    driver.quit = quit
    driver.engine = "webkit"
    driver.get_log = lambda kind: []
    driver.console_read = False
    return driver


def firefox_problem():
    """Why Firefox cannot run here (None: it can): Debian's firefox-esr and Mozilla's own
    Marionette client (PyPI marionette-driver; geckodriver is neither in Debian nor on PyPI)."""
    if shutil.which("firefox-esr") is None:
        return "firefox-esr is missing (scripts/setup.sh --tests installs it)"
    try:
        import marionette_driver  # noqa: F401
    except ImportError:
        return "marionette-driver is missing (PyPI: scripts/setup.sh --tests installs it)"
    return None


# A TCP forwarder (ADDRESS PORT → 127.0.0.1:TARGET), run in a network namespace.
_FORWARDER = """
import asyncio, sys
async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()
async def handle(reader, writer):
    try:
        target = await asyncio.open_connection("127.0.0.1", int(sys.argv[3]))
    except OSError:
        writer.close()
        return
    await asyncio.gather(pipe(reader, target[1]), pipe(target[0], writer))
async def main():
    server = await asyncio.start_server(handle, sys.argv[1], int(sys.argv[2]))
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""


class FirefoxElement:
    """A page's element in Firefox with Selenium's element API (Marionette's, but for
    `get_attribute`, which reads the property first and the attribute after, as Selenium's)."""

    def __init__(self, element):
        self.element = element

    def __eq__(self, other):
        return isinstance(other, FirefoxElement) and self.element == other.element

    def __hash__(self):
        return hash(self.element)

    def __getattr__(self, name):  # click, send_keys, clear, is_displayed, is_enabled, is_selected, value_of_css_property
        return getattr(self.element, name)

    @property
    def text(self):
        return self.element.text

    @property
    def tag_name(self):
        return self.element.tag_name

    @property
    def rect(self):
        return self.element.rect

    @property
    def size(self):
        return {"width": self.element.rect["width"], "height": self.element.rect["height"]}

    @property
    def location(self):
        return {"x": self.element.rect["x"], "y": self.element.rect["y"]}

    def find_element(self, by, value):
        return FirefoxElement(self.element.find_element(by, value))

    def find_elements(self, by, value):
        return [FirefoxElement(e) for e in self.element.find_elements(by, value)]

    def get_dom_attribute(self, name):
        return self.element.get_attribute(name)

    def get_attribute(self, name):
        value = self.element.get_property(name)
        if value is None or not isinstance(value, (str, int, float, bool)):  # an object (`list`: its datalist): the attribute
            return self.element.get_attribute(name)
        if isinstance(value, bool):  # Selenium's: "true", or None
            return "true" if value else None
        return value if isinstance(value, str) else str(value)


def _firefox_in(value):
    if isinstance(value, FirefoxElement):
        return value.element
    if isinstance(value, (list, tuple)):
        return [_firefox_in(v) for v in value]
    if isinstance(value, dict):
        return {k: _firefox_in(v) for k, v in value.items()}
    return value


def _firefox_out(value):
    from marionette_driver.marionette import WebElement
    if isinstance(value, WebElement):
        return FirefoxElement(value)
    if isinstance(value, list):
        return [_firefox_out(v) for v in value]
    if isinstance(value, dict):
        return {k: _firefox_out(v) for k, v in value.items()}
    return value


class Firefox:
    """Headless Firefox ESR driven through Marionette, with the part of Selenium's WebDriver the
    page's scripts use (`get`, `refresh`, `execute_script`, `find_element(s)` and Selenium's
    element API, `switch_to.active_element`, `current_url`, `get_log("browser")`,
    `save_screenshot`, window sizes, `quit`) and the keyboard (`send_keys`, `chord`: W3C actions,
    as Selenium's). Its own profile, in a directory of its own, removed at `quit`."""

    engine = "firefox"
    console_read = True

    def __init__(self, width=900, height=1000, accept_language=None, namespace=None, address=None, trust=None):
        """`namespace`, `address`: Firefox runs in that network namespace (a phone's), its
        Marionette reached at that address of it. `trust`: a root certificate (DER) the profile's
        own NSS database trusts for websites, as a person's Settings → Certificates → Import."""
        from marionette_driver.marionette import Marionette
        self.profile = tempfile.mkdtemp(prefix="pulse-firefox-")
        self.forwarder = None
        if trust:
            subprocess.run(["certutil", "-d", f"sql:{self.profile}", "-N", "--empty-password"], check=True, capture_output=True, timeout=30)
            subprocess.run(["certutil", "-d", f"sql:{self.profile}", "-A", "-t", "C,,", "-n", "House Pulse", "-i", trust],
                           check=True, capture_output=True, timeout=30)
        port = free_port()
        prefs = {"marionette.port": port, "browser.shell.checkDefaultBrowser": False, "app.update.disabledForTesting": True,
                 "datareporting.policy.dataSubmissionEnabled": False, "toolkit.telemetry.reportingpolicy.firstRun": False,
                 "browser.startup.homepage_override.mstone": "ignore", "network.captive-portal-service.enabled": False,
                 "browser.aboutwelcome.enabled": False}
        if accept_language:
            prefs["intl.accept_languages"] = accept_language
        with open(os.path.join(self.profile, "user.js"), "w", encoding="utf-8") as f:
            f.writelines(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in prefs.items())
        inside = ["ip", "netns", "exec", namespace] if namespace else []
        self.process = subprocess.Popen(inside + ["firefox-esr", "--marionette", "--remote-allow-system-access", "--headless", "--no-remote",
                                                  "--profile", self.profile],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        env={**os.environ, "MOZ_HEADLESS_WIDTH": str(width), "MOZ_HEADLESS_HEIGHT": str(height)})
        host = "127.0.0.1"
        try:
            if namespace:
                # Marionette listens on its namespace's loopback only: a forwarder in the namespace
                # gives it at the namespace's address.
                outside = free_port()
                self.forwarder = subprocess.Popen(inside + [sys.executable, "-c", _FORWARDER, address, str(outside), str(port)],
                                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                host, port = address, outside
            wait("Firefox's Marionette port", lambda: accepts(port, host) and self._answers(host, port), timeout=60)
            self.client = Marionette(port=port)
            self.client.host = host  # its constructor takes a host and keeps 127.0.0.1 (marionette-driver 3.7.1)
            self.client.start_session()
            self.client.set_window_rect(width=width, height=height)
        except BaseException:
            self.process.kill()
            self.process.wait(timeout=20)
            if self.forwarder:
                end_process(self.forwarder)
            shutil.rmtree(self.profile, ignore_errors=True)
            raise

    @property
    def driver(self):  # as the phone scripts' browsers: `phone.driver`
        return self

    @staticmethod
    def _answers(host, port):
        """Marionette's greeting read (through a forwarder, a connection is taken before
        Firefox listens)."""
        try:
            with socket.create_connection((host, port), timeout=2) as connection:
                return bool(connection.recv(16))
        except OSError:
            return False

    def get(self, url):
        self.client.navigate(url)

    @property
    def current_url(self):
        return self.client.get_url()

    @property
    def page_source(self):
        return self.client.page_source

    @property
    def switch_to(self):
        client = self.client

        class SwitchTo:
            @property
            def active_element(self):
                return FirefoxElement(client.get_active_element())
        return SwitchTo()

    def find_element(self, by, value):
        return FirefoxElement(self.client.find_element(by, value))

    def find_elements(self, by, value):
        return [FirefoxElement(e) for e in self.client.find_elements(by, value)]

    def get_window_size(self):
        rect = self.client.window_rect
        return {"width": rect["width"], "height": rect["height"]}

    def get_log(self, kind):
        """The pages' script errors, as Chromium's `get_log("browser")` gives them (level SEVERE):
        read from the browser's console service (every error of every page of this profile since
        its start is kept there; entries read before are not said again)."""
        if kind != "browser":
            raise ValueError(f"no {kind} log in Firefox")
        self.client.set_context("chrome")
        try:
            errors = self.client.execute_script(
                "return Services.console.getMessageArray().filter(m => m instanceof Ci.nsIScriptError && !(m.flags & 1)"
                " && !m.isFromChromeContext && !String(m.sourceName).startsWith('chrome:') && !String(m.sourceName).startsWith('resource:'))"
                ".map(m => `${m.sourceName} ${m.lineNumber}:${m.columnNumber} ${m.errorMessage}`)")
        finally:
            self.client.set_context("content")
        fresh = errors[self._errors_read:]
        self._errors_read = len(errors)
        return [{"level": "SEVERE", "message": message} for message in fresh]

    _errors_read = 0

    def clear_http_cache(self):
        """Empties the browser's HTTP cache (its cache service, from the chrome context)."""
        self.client.set_context("chrome")
        try:
            self.client.execute_script("Services.cache2.clear()")
        finally:
            self.client.set_context("content")

    def refresh(self):
        self.client.refresh()

    def execute_script(self, script, *args):
        # In the page's own scope (no sandbox), as Selenium's: the page's globals are seen.
        return _firefox_out(self.client.execute_script(script, script_args=_firefox_in(list(args)), sandbox=None))

    def execute_async_script(self, script, *args):
        """`script` calls its last argument with the answer (as Selenium's)."""
        return _firefox_out(self.client.execute_async_script(script, script_args=_firefox_in(list(args)), sandbox=None,
                                                             script_timeout=60000))

    def save_screenshot(self, path):
        with open(path, "wb") as f:
            self.client.save_screenshot(f, full=False)

    def set_window_size(self, width, height):
        self.client.set_window_rect(width=width, height=height)

    def send_keys(self, *pressed):
        """Each key of each string pressed and released in turn (Selenium's `Keys` are the
        W3C's key codes, as Marionette reads them)."""
        sequence = self.client.actions.sequence("key", "keyboard")
        for text in pressed:
            for key in text:
                sequence.key_down(key).key_up(key)
        sequence.perform()

    def chord(self, modifier, key):
        self.client.actions.sequence("key", "keyboard").key_down(modifier).key_down(key).key_up(key).key_up(modifier).perform()

    def quit(self):
        try:
            self.client.delete_session()
        except Exception:  # the browser may be gone already: it is ended below either way
            pass
        end_process(self.process)
        if self.forwarder:
            end_process(self.forwarder)
        shutil.rmtree(self.profile, ignore_errors=True)


ENGINES = ["chromium", "firefox", "webkit"]


AXE_RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
_axe_source = []


def axe_violations(driver):
    """axe-core's violations of WCAG 2.0/2.1/2.2 A and AA (`AXE_RULES`) on the page as it is now,
    once its animations ended (a fading element is not what a person reads): `rule (impact):
    selectors`. A run during which an animation or transition started (a tab appearing, a redraw:
    WebKitGTK under load once gave axe a tab still at 84 % opacity) read no settled page and is
    made again, up to four times. axe.min.js comes from the PyPI wheel axe-playwright-python
    (scripts/setup.sh)."""
    if not _axe_source:
        import axe_playwright_python
        with open(os.path.join(os.path.dirname(axe_playwright_python.__file__), "axe.min.js"), encoding="utf-8") as f:
            _axe_source.append(f.read())
    if not driver.execute_script("return typeof axe === 'object'"):
        driver.execute_script(_axe_source[0])
    driver.execute_script("""
      if (window.pulseMotions === undefined) {
        window.pulseMotions = 0;
        for (const kind of ['animationstart', 'transitionstart', 'transitionrun'])
          document.addEventListener(kind, () => { window.pulseMotions += 1; }, true);
      }""")
    # Still: no animation running or about to start, after two frames (the page's rendering
    # updated twice: an animation its last change started has begun, and its start event is
    # counted; a WebKitGTK under load read the More tab at 80 % of its appearing fade once).
    settled = """const done = arguments[arguments.length - 1];
      let said = false;
      const check = () => {
        if (said) return;
        said = true;
        document.documentElement.getBoundingClientRect();
        done(document.getAnimations().filter((a) => a.playState === 'running' || a.pending).length === 0);
      };
      requestAnimationFrame(() => requestAnimationFrame(check));
      setTimeout(check, 1000);  // no frames (a hidden window): as before"""
    for attempt in range(4):
        wait("the page's animations to end", lambda: driver.execute_async_script(settled))
        before = driver.execute_script("return window.pulseMotions")
        result = driver.execute_async_script(
            "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}, resultTypes: ['violations']})"
            ".then(arguments[arguments.length - 1])", AXE_RULES)
        if driver.execute_async_script(settled) and driver.execute_script("return window.pulseMotions") == before:
            break
        print(f"(axe read a page that moved during its run: read again, {attempt + 1})", flush=True)
    else:
        raise Failed("the page never held still for axe (an animation started during each of four runs)")
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]} {v['nodes'][0].get('failureSummary', '')[:160]!r}"
            for v in result["violations"]]


# What a person loses when the page does not reflow: an element reaching past the window's right
# edge, or text cut inside its box (not an ellipsis the page chose). Fixed parts (the tab bar)
# count too; what is hidden, only for screen readers (1 px) or only decoration (aria-hidden: a
# reward's confetti falling from anywhere across the screen) does not.
_OVERFLOWING = """
  const out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e.offsetParent === null && getComputedStyle(e).position !== 'fixed') continue;
    if (e.closest('[aria-hidden="true"]')) continue;
    const r = e.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1) continue;
    if (r.right > window.innerWidth + 1) out.push(`${e.tagName}#${e.id}.${e.className}: right edge at ${Math.round(r.right)}`);
    else if (e.children.length === 0 && !['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName)  // a field's own text scrolls in it
             && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow !== 'visible'
             && getComputedStyle(e).textOverflow !== 'ellipsis') out.push(`${e.tagName}.${e.className} "${e.textContent}" is cut`);
  }
  const wide = document.documentElement.scrollWidth, seen = document.documentElement.clientWidth;
  if (wide > seen) out.unshift(`the page is ${wide} px wide in a window of ${seen}: it scrolls sideways`);
  return out;"""


def overflowing(driver):
    """What does not fit the window as the page is now (WCAG 1.4.10, reflow): [] when all of it does."""
    return driver.execute_script(_OVERFLOWING)


def engine_option(argv):
    """`--engine=chromium|firefox|webkit` taken out of a script's arguments (default chromium)."""
    engine = "chromium"
    for argument in list(argv):
        if argument.startswith("--engine="):
            engine = argument.split("=", 1)[1]
            argv.remove(argument)
    if engine not in ENGINES:
        raise SystemExit(f"unknown engine {engine!r}: one of {', '.join(ENGINES)}")
    return engine


def open_browser(engine, width=900, height=1000, accept_language=None):
    """A browser of this engine with Selenium's WebDriver API (as far as the scripts use it):
    headless Chromium, headless Firefox ESR (Marionette) or WebKitGTK (under an Xvfb of its own;
    it takes its languages from the display's locale, not from `accept_language`)."""
    if engine == "firefox":
        return Firefox(width, height, accept_language=accept_language)
    if engine == "webkit":
        return webkit(width, height, accept_language=accept_language)
    driver = browser(width, height, accept_language=accept_language)
    driver.engine = "chromium"
    driver.console_read = True
    return driver


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


_STARTED = time.monotonic()


def ok(message):
    print(f"ok {message}" + (f" [{time.monotonic() - _STARTED:.1f} s]" if os.environ.get("PULSE_TIMINGS") else ""), flush=True)


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
        ok(message)
    _said[0] = len(failures)
