#!/usr/bin/env python3
"""The web page's defences, attacked from outside (docs/SECURITY.md, "The web page"):

    web_security.py PULSE_PEER HOME WEB_URL

Raw HTTP (http.client, so every header is ours to forge) and a real browser on a hostile
page of another origin. Each check prints `ok …`; a failure prints `FAILED: …` (exit 1).
After every refused request the household must be unchanged (`pulse-peer export`).
"""
import http.client
import http.server
import json
import select
import socket
import sys
import threading
import time
from urllib.parse import urlparse

import web_support
from web_support import Failed, wait

BIN, HOME, WEB = sys.argv[1:4]
PORT = urlparse(WEB).port
HOST = f"127.0.0.1:{PORT}"


def expect(condition, what):
    """One check: a failure is said (`FAILED: what`) and the script goes on to the next
    (web_support.expect); the section's `ok` is then not said."""
    web_support.expect(what, condition, "")


checked = [0]


def section_ok(message):
    """The `ok` of a section, said only when none of its checks failed."""
    if len(web_support.failures) == checked[0]:
        print(f"ok {message}", flush=True)
    checked[0] = len(web_support.failures)


def cli(*args):
    return web_support.cli(BIN, HOME, *args)


def household():
    return cli("export", "--json")


def send(method, path, headers=None, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in (headers or {}).items():
        connection.putheader(name, value)
    data = body.encode() if isinstance(body, str) else body
    if data is not None:
        connection.putheader("Content-Length", str(len(data)))
    connection.endheaders(data)
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, dict((k.lower(), v) for k, v in response.getheaders()), \
        response.headers.get_all("Set-Cookie") or [], payload.decode(errors="replace")


def login():
    link = cli("open", "--print").split()[-1]
    path = link[len(WEB):]
    status, _, cookies, _ = send("GET", path, {"Host": HOST})
    expect(status == 200 and cookies, f"a fresh sign-in link is accepted (got {status})")
    cookie = cookies[0].split(";")[0]
    status, _, _, body = send("GET", "/api/session", {"Host": HOST, "Cookie": cookie})
    expect(status == 200, f"the session works ({status} {body})")
    return path, cookie, cookies[0], json.loads(body)["csrf"]


def main():
    before = household()
    secret_words = [item for item in ["Milk", "Smith"] if item in before]

    # --- no cookie: 401 and no data ---
    for method, path in [("GET", "/api/session"), ("GET", "/api/status"), ("GET", "/api/events"), ("GET", "/api/backup"),
                         ("POST", "/api/call/shop.list"), ("POST", "/api/call/shop.add")]:
        status, _, _, body = send(method, path, {"Host": HOST, "Origin": WEB, "Content-Type": "application/json"}, "{}")
        expect(status == 401, f"{method} {path} without a cookie → 401 (got {status})")
        expect(not any(word in body for word in secret_words), f"{method} {path} without a cookie leaks data: {body}")
    status, _, _, body = send("GET", "/api/session", {"Host": HOST, "Cookie": f"pulse_session_{PORT}=forged-value"})
    expect(status == 401, f"a forged cookie → 401 (got {status})")
    section_ok("without a session cookie (or with a forged one) every API path answers 401 and no household data")

    # --- the login token is single-use ---
    path, cookie, set_cookie, csrf = login()
    attributes = [a.strip().lower() for a in set_cookie.split(";")[1:]]
    expect("httponly" in attributes and "samesite=strict" in attributes and "path=/" in attributes,
           f"the cookie is HttpOnly, SameSite=Strict: {set_cookie}")
    status, _, cookies, body = send("GET", path, {"Host": HOST})
    expect(status == 401 and not cookies, f"the same sign-in link a second time → 401, no cookie (got {status}, {cookies})")
    status, _, cookies, _ = send("GET", "/login?token=" + "A" * 43, {"Host": HOST})
    expect(status == 401 and not cookies, f"a made-up token → 401 (got {status})")
    status, _, cookies, _ = send("GET", "/login", {"Host": HOST})
    expect(status == 401 and not cookies, f"no token → 401 (got {status})")
    section_ok("a sign-in link works once (HttpOnly, SameSite=Strict cookie); again, made up, or missing → 401 and no cookie")

    # --- Host must name loopback (DNS rebinding) ---
    for host in [f"evil.example:{PORT}", f"127.0.0.1.nip.io:{PORT}", f"192.168.1.20:{PORT}", "localhost", None]:
        headers = {"Cookie": cookie, "Origin": WEB, "X-Pulse-CSRF": csrf, "Content-Type": "application/json"}
        if host:
            headers["Host"] = host
        for method, target, body in [("GET", "/", None), ("GET", "/api/session", None),
                                     ("POST", "/api/call/shop.add", json.dumps({"names": ["Rebound"]}))]:
            status, _, _, text = send(method, target, headers, body)
            expect(status in (400, 421), f"Host {host!r}: {method} {target} refused (got {status})")
            expect(csrf not in text, f"Host {host!r} leaked the CSRF token")
    fresh_link = cli("open", "--print").split()[-1][len(WEB):]
    status, _, cookies, _ = send("GET", fresh_link, {"Host": f"evil.example:{PORT}"})
    expect(status == 421 and not cookies, f"a sign-in link through a foreign Host → refused (got {status})")
    expect(household() == before, "a request with a foreign Host changed the household")
    section_ok("a Host naming anything but this machine's loopback (or none) is refused (421/400), even with a valid cookie")

    # --- cross-origin and token-less POSTs are refused ---
    good = {"Host": HOST, "Cookie": cookie, "Origin": WEB, "X-Pulse-CSRF": csrf, "Content-Type": "application/json"}
    add = json.dumps({"names": ["Forged"]})
    for label, change in [("Origin of another site", {"Origin": "http://evil.example"}),
                          ("Origin of another port on this machine", {"Origin": f"http://127.0.0.1:{PORT + 1}"}),
                          ("Origin null", {"Origin": "null"}),
                          ("no Origin", {"Origin": None}),
                          ("no CSRF token", {"X-Pulse-CSRF": None}),
                          ("a wrong CSRF token", {"X-Pulse-CSRF": csrf[:-1] + ("B" if csrf.endswith("A") else "A")}),
                          ("a form's content type", {"Content-Type": "application/x-www-form-urlencoded"})]:
        headers = {k: v for k, v in {**good, **change}.items() if v is not None}
        status, _, _, text = send("POST", "/api/call/shop.add", headers, add)
        expect(status in (403, 415), f"{label}: refused (got {status} {text})")
    expect(household() == before, "a refused POST changed the household")
    status, _, _, text = send("POST", "/api/call/shop.add", good, add)
    expect(status == 200 and "Forged" in text, f"the same request from the page itself works (got {status} {text})")
    section_ok("POSTs from another origin, with no Origin, or without this page's CSRF token are refused; the page's own works")

    # --- bad input: a clear error, nothing changed ---
    before = household()
    for label, body, expected in [("not JSON", "{names:", 400), ("an array", "[1]", 400),
                                  ("a wrong type", json.dumps({"names": "Milk"}), 422),
                                  ("an empty name", json.dumps({"names": [" "]}), 422)]:
        status, _, _, text = send("POST", "/api/call/shop.add", good, body)
        expect(status == expected and "error" in json.loads(text), f"{label} → {expected} with an error (got {status} {text})")
    status, _, _, text = send("POST", "/api/call/no.such.method", good, "{}")
    expect(status == 404, f"an unknown method → 404 (got {status})")
    status, _, _, text = send("POST", "/api/call/shop.add", good, "x" * (65 * 1024))
    expect(status == 413, f"a 65 KiB body → 413 (got {status})")
    expect(household() == before, "bad input changed the household")
    section_ok("bad parameters, unknown methods and oversized bodies get a clear error and change nothing")

    parents_mode_needs_the_pin(good)
    new_endpoints(cookie, csrf, good)

    # --- a backup: signed in only, a whole SQLite file, never cached ---
    status, response, _, body = send("GET", "/api/backup", {"Host": HOST, "Cookie": cookie})
    expect(status == 200 and body.startswith("SQLite format 3\x00"), f"GET /api/backup signed in → a database (got {status}, {body[:16]!r})")
    expect(response.get("cache-control") == "no-store", f"a backup is not cached ({response.get('cache-control')!r})")
    expect("attachment" in response.get("content-disposition", ""), "a backup downloads as a file")
    section_ok("a signed-in page downloads a whole backup (never cached); without a session it gets 401")

    # --- every response carries the security headers; no inline script allowed ---
    for method, target, headers in [("GET", "/", {"Host": HOST}), ("GET", "/api/session", {"Host": HOST, "Cookie": cookie}),
                                    ("GET", "/nowhere", {"Host": HOST}), ("GET", "/login?token=x", {"Host": HOST})]:
        status, response, _, _ = send(method, target, headers)
        csp = response.get("content-security-policy", "")
        expect("script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp,
               f"{target}: CSP {csp!r}")
        expect(response.get("x-frame-options") == "DENY", f"{target}: X-Frame-Options {response.get('x-frame-options')!r}")
        expect(response.get("x-content-type-options") == "nosniff", f"{target}: nosniff")
    section_ok("every response has a CSP without inline script, X-Frame-Options DENY, nosniff")

    # --- malformed HTTP and many connections: refused, and the page still answers ---
    raw = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    raw.sendall(b"GET / HTTP/1.1\r\nHost: " + HOST.encode() + b"\r\nBad Header Line\r\n\r\n")
    answer = raw.recv(100)
    raw.close()
    expect(answer.startswith(b"HTTP/1.1 400"), f"a malformed request → 400 (got {answer[:40]!r})")
    crowd = [socket.create_connection(("127.0.0.1", PORT), timeout=5) for _ in range(80)]
    closed = set()
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and len(closed) < len(crowd) - 64:
        readable, _, _ = select.select([s for s in crowd if s not in closed], [], [], 0.1)
        for s in readable:
            if s.recv(1) == b"":
                closed.add(s)
    refused = len(closed)
    for s in crowd:
        s.close()
    status = wait("the page to answer once the crowd left",
                  lambda: send("GET", "/api/session", {"Host": HOST, "Cookie": cookie})[0] == 200 and 200)[0]
    expect(refused >= 80 - 64, f"beyond 64 connections are closed at once (closed {refused} of 80)")
    expect(status == 200, f"the page answers after the crowd left (got {status})")
    section_ok(f"a malformed request gets 400; of 80 idle connections {refused} were closed at once; the page still answers")

    browser_attack(cookie)

    # --- logout ends the session ---
    status, _, cookies, _ = send("POST", "/api/logout", {**good, "Content-Length": "0"})
    expect(status == 200 and cookies and "max-age=0" in cookies[0].lower(), f"logout clears the cookie ({status} {cookies})")
    status, _, _, _ = send("GET", "/api/session", {"Host": HOST, "Cookie": cookie})
    expect(status == 401, f"the old cookie after logout → 401 (got {status})")
    section_ok("sign-out ends the session: the old cookie answers 401")


def call(good, method, params, headers=None):
    status, _, _, text = send("POST", f"/api/call/{method}", {**good, **(headers or {})}, json.dumps(params))
    return status, json.loads(text) if text.startswith("{") else text


def parents_mode_needs_the_pin(good):
    """Issue 58's adult actions through the page's API: each without the PIN is refused
    (pin_required), and nothing changes; with it, the same request works."""
    def answer(method, params):
        status, body = call(good, method, params)
        expect(status == 200, f"{method} with the PIN: {status} {body}")
        return body.get("result") if isinstance(body, dict) else None
    answer("kids.add", {"name": "Sam", "pin": "1234"})
    answer("kids.select", {"items": ["chore_001", "rule_001", "reward_001"], "pin": "1234"})
    answer("kids.adjust", {"kid": "Sam", "peanuts": 10, "reason": "start", "pin": "1234"})
    answer("kids.done", {"kid": "Sam", "item": "rule_001"})
    answer("kids.goal.set", {"kid": "Sam", "reward": "reward_001"})
    answer("kids.approval.set", {"value": "on", "pin": "1234"})
    report = answer("kids.report", {"kid": "Sam", "item": "chore_001"}) or {}
    before = household()
    codes = {}
    for method, params in [("kids.approve", {"report": report.get("id", "?")}), ("kids.decline", {"report": report.get("id", "?"), "word": "no"}),
                           ("kids.approval.set", {"value": "off"}), ("kids.bonus", {"kid": "Sam", "entry": "rule_001", "peanuts": 2}),
                           ("kids.goal.redeem", {"kid": "Sam"}), ("kids.adjust", {"kid": "Sam", "peanuts": -5, "reason": "x"})]:
        status, body = call(good, method, params)
        codes[method] = (status, body.get("error", {}).get("code") if isinstance(body, dict) else body)
    expect(all(code == (422, "pin_required") for code in codes.values()), f"adult actions without the PIN: {codes}")
    expect(household() == before, "an adult action without the PIN changed the household")
    status, body = call(good, "kids.approve", {"report": report.get("id", "?"), "pin": "1234"})
    expect(status == 200 and body["result"]["status"] == "approved", f"the same approval with the PIN: {status} {body}")
    section_ok(f"parents' mode through the page's API: approve, decline, the approval setting, a bonus, a goal given and an adjustment "
               f"without the PIN → 422 pin_required, nothing changed; the approval with it works")


def new_endpoints(cookie, csrf, good):
    """Issue 41's endpoints: "Add a computer", the PIN check, machines, deletes and undos."""
    before = household()
    machines = lambda: [(m["id"], m["name"], m["removed"]) for m in json.loads(cli("devices", "--json"))]
    devices = machines()
    invite_status = lambda: json.loads(cli("status", "--json"))["machine"].get("invitationExpires")
    # /api/invite: the same gates as every POST, and its own bounds.
    for label, headers, body, expected in [
            ("no cookie", {"Cookie": None}, "{}", 401), ("another origin", {"Origin": "http://evil.example"}, "{}", 403),
            ("no CSRF token", {"X-Pulse-CSRF": None}, "{}", 403), ("a form", {"Content-Type": "text/plain"}, "{}", 415),
            ("not JSON", {}, "{minutes:", 400), ("an array", {}, "[]", 400),
            ("minutes out of range", {}, json.dumps({"minutes": 999}), 422), ("a member that is a number", {}, json.dumps({"member": 5}), 422),
            ("an unknown member", {}, json.dumps({"member": "Nobody"}), 422), ("a huge body", {}, "x" * (65 * 1024), 413)]:
        headers = {k: v for k, v in {**good, **headers}.items() if v is not None}
        status, _, _, text = send("POST", "/api/invite", headers, body)
        expect(status == expected, f"/api/invite with {label} → {expected} (got {status} {text[:200]})")
        expect(invite_status() is None, f"/api/invite with {label} opened an invitation")
    status, _, _, text = send("GET", "/api/invite", {"Host": HOST, "Cookie": cookie})
    expect(status == 404, f"GET /api/invite → 404 (got {status})")
    section_ok("“Add a computer” (/api/invite) without a session, from another origin, without the token, with bad or huge bodies, "
          "out-of-range minutes or an unknown member is refused, and no invitation is opened")

    # The PIN: wrong ones refused, a flood held by the rate limit (the right one too, meanwhile).
    answers = [call(good, "kids.pin.check", {"pin": "0000"}) for _ in range(12)]
    codes = [a[1]["error"]["code"] for a in answers]
    expect(codes[:3] == ["wrong_pin"] * 3 and set(codes[3:]) == {"pin_locked"}, f"a flood of wrong PINs: {codes}")
    status, answer = call(good, "kids.pin.check", {"pin": "1234"})
    expect(status == 422 and answer["error"]["code"] == "pin_locked", f"the right PIN during the wait: {answer}")
    status, answer = call(good, "kids.add", {"name": "Eve", "pin": "1234"})
    expect(status == 422 and answer["error"]["code"] == "pin_locked", f"an adult action during the wait: {answer}")
    for label, params in [("no PIN", {}), ("a PIN of letters", {"pin": "abcd"}), ("a number", {"pin": 1234})]:
        status, answer = call(good, "kids.pin.check", params)
        expect(status == 422 and "error" in answer, f"kids.pin.check with {label}: {answer}")
    section_ok(f"a flood of 12 wrong PINs: 3 refused as wrong, then every one made to wait ({answers[-1][1]['error']['message']!r}), "
          "the right PIN and adult actions too")

    # Machines, deletes and undos on unknown, wrong or malformed ids: refused, nothing changed.
    this = devices[0][0]
    for method, params, code in [
            ("machine.rename", {"machine": "ffffffffffff", "name": "Mine"}, "not_found"),
            ("machine.rename", {"machine": "ab", "name": "Mine"}, "machine_id_too_short"),
            ("machine.rename", {"machine": this, "name": "x" * 500}, "too_long"),
            ("machine.rename", {"machine": this, "name": " "}, "empty"),
            ("machine.remove", {"machine": this}, "cannot_remove_self"),
            ("machine.remove", {"machine": "ffffffffffff"}, "not_found"),
            ("shop.delete", {"item": "01a2-no-such-item"}, "not_found"),
            ("shop.undelete", {"item": "01a2-no-such-item"}, "nothing_to_undo"),
            ("shop.undelete", {"item": "x", "pool": "deleted"}, "invalid_pool"),
            ("task.undelete", {"task": "not-a-row-id"}, "nothing_to_undo"),
            ("task.undelete", {}, "missing_parameter")]:
        status, answer = call(good, method, params)
        expect(status == 422 and answer["error"]["code"] == code, f"{method} {params} → {code} (got {status} {answer})")
    for method in ["welcome.start", "welcome.join"]:
        status, _ = call(good, method, {"household": "Stolen"})
        expect(status == 404, f"{method} on a computer with a household → 404 (got {status})")
    expect(household() == before, "refused calls changed the household")
    expect(machines() == devices, f"refused calls changed the machines: {devices} → {machines()}")
    section_ok("unknown, too-short, oversized and malformed machine, item and task ids or names are refused with their codes; "
          "the welcome's methods do not exist once there is a household; nothing changed")


EVIL = """<!doctype html><html><body><h1>Win a prize</h1>
<form id="f" method="POST" action="{web}/api/call/shop.add" enctype="text/plain">
<input name='{{"names":["Form attack"],"x":"' value='"}}'></form>
<script>
window.results = [];
fetch("{web}/api/call/shop.add", {{method: "POST", credentials: "include", mode: "no-cors",
  headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{names: ["Fetch attack"]}})}})
  .then(r => window.results.push("fetch:" + r.type)).catch(e => window.results.push("fetch-error"));
fetch("{web}/api/call/shop.list", {{method: "POST", credentials: "include",
  headers: {{"Content-Type": "application/json"}}, body: "{{}}"}})
  .then(r => r.text()).then(t => window.results.push("read:" + t)).catch(e => window.results.push("read-blocked"));
</script></body></html>"""


def browser_attack(cookie):
    """A signed-in browser visits a hostile page on another port of this machine (the same
    site for cookies: only the Origin check stands between it and the household)."""
    before = household()
    page = EVIL.format(web=WEB).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = web_support.browser()
    try:
        driver.get(cli("open", "--print").split()[-1])  # signed in, as the owner would be
        wait("the page to load", lambda: driver.execute_script("return document.body && document.body.dataset.ready") == "true",
             timeout=10)
        driver.get(f"http://127.0.0.1:{server.server_port}/")
        results = wait("the hostile page's requests to finish",
                       lambda: (r := driver.execute_script("return window.results || []")) and len(r) >= 2 and r, timeout=10)[0]
        expect(not any(r.startswith("read:") for r in results), f"the hostile page read the household: {results}")
        driver.execute_script("document.getElementById('f').submit()")
        form_answer = wait("the form post's answer", lambda: "refused" in (t := driver.find_element("tag name", "body").text)
                           and t, timeout=10)[0]
        expect("refused" in form_answer, f"the form post reached the agent and was refused by it (got {form_answer!r})")
        expect("Form attack" not in household() and "Fetch attack" not in household(),
               "a hostile page's POST reached the household")
        expect(household() == before, "a hostile page changed the household")
    finally:
        driver.quit()
        server.shutdown()
    section_ok(f"a hostile page in the signed-in browser could neither read ({results}) nor write the household (its form got: {form_answer})")


if __name__ == "__main__":
    web_support.run(main)
