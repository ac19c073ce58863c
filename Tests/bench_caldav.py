"""CalDAV's figures for the benchmark (issue 59; scripts/bench.sh, docs/PERFORMANCE.md), each
beside the page's equivalent in the same run, against a real agent over the phones' HTTPS
listener with an app password (one kept-alive connection each, as an app and a page keep one):

- a first sync of a list of ITEMS to-dos (sync-collection with no token, ETags and the
  objects' text) beside the page's read of the same list (`shop.list`);
- a sync with no change (from the latest token) and after one change (from the token before
  it), beside the page's read of the list again (what the page does after a change today).

Usage: bench_caldav.py BIN HOME [ITEMS] [ROUNDS] (HOME: a household, no agent running). Prints one
JSON object: medians in ms and the answers' bytes.
"""
import http.client
import json
import os
import ssl
import statistics
import subprocess
import sys
import time
import urllib.parse

binary, home = sys.argv[1], sys.argv[2]
items = int(sys.argv[3]) if len(sys.argv) > 3 else 500
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 20


def cli(*args):
    run = subprocess.run([binary, *args, "--home", home], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        raise SystemExit(f"{args}: {run.stderr}")
    return run.stdout


def wait(what, condition, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)  # the polling interval of this deadline-bounded wait
    raise SystemExit(f"timed out waiting for {what}")


agent = subprocess.Popen([binary, "run", "--home", home, "--port", "0", "--no-mdns", "--web", "127.0.0.1:0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    wait("the agent", lambda: subprocess.run([binary, "status", "--home", home], capture_output=True).returncode == 0)
    phones = json.loads(cli("phones", "on", "--port", "0", "--json"))
    port = phones["port"]
    cli("caldav", "on")
    made = json.loads(cli("caldav", "passwords", "add", "Bench", "--json"))
    member = made["record"]["memberID"]
    auth = "Basic " + __import__("base64").b64encode(f"{made['record']['login']}:{made['password']}".encode()).decode()
    names = [f"item {n:04d}" for n in range(items)]
    for start in range(0, items, 100):
        cli("shop", "add", *names[start:start + 100])

    # CalDAV: TLS to the listener, trusting the household CA only (the name checked is not: the
    # bench connects to 127.0.0.1).
    context = ssl.create_default_context(cafile=os.path.join(home, "phones", "root.pem"))
    context.check_hostname = False
    dav = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
    collection = f"/dav/{member}/lists/shopping/"

    def sync(token, data=True):
        token_element = f"<d:sync-token>{token}</d:sync-token>" if token else "<d:sync-token/>"
        props = "<d:getetag/><c:calendar-data/>" if data else "<d:getetag/>"
        body = (f'<d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">{token_element}'
                f"<d:sync-level>1</d:sync-level><d:prop>{props}</d:prop></d:sync-collection>")
        start = time.perf_counter()
        dav.request("REPORT", collection, body=body, headers={"Authorization": auth, "Content-Type": "application/xml"})
        answer = dav.getresponse()
        text = answer.read()
        ms = (time.perf_counter() - start) * 1000
        if answer.status != 207:
            raise SystemExit(f"sync: {answer.status} {text[:300]!r}")
        found = text.decode().split("<d:sync-token>")[-1].split("</d:sync-token>")[0]
        return ms, len(text), found, text.count(b"<d:response>")

    # The page: signed in by a link of `open --print`, as the computer's person is.
    link = urllib.parse.urlsplit(next(w for w in cli("open", "--print").split() if w.startswith("http://")))
    page = http.client.HTTPConnection(link.hostname, link.port, timeout=30)
    page.request("GET", link.path + "?" + link.query)
    signed = page.getresponse()
    signed.read()
    cookie = signed.getheader("Set-Cookie").split(";")[0]
    origin = f"http://{link.hostname}:{link.port}"
    page.request("GET", "/api/session", headers={"Cookie": cookie})
    csrf = json.loads(page.getresponse().read())["csrf"]

    def page_list():
        start = time.perf_counter()
        page.request("POST", "/api/call/shop.list", body=b"{}", headers={
            "Cookie": cookie, "Origin": origin, "X-Pulse-CSRF": csrf, "Content-Type": "application/json"})
        answer = page.getresponse()
        text = answer.read()
        ms = (time.perf_counter() - start) * 1000
        if answer.status != 200:
            raise SystemExit(f"shop.list: {answer.status} {text[:300]!r}")
        return ms, len(text)

    sync(None)  # signs in (one scrypt), warms both sides
    page_list()
    first, first_bytes, base, base_bytes, still, still_bytes, moved, moved_bytes = [], 0, [], 0, [], 0, [], 0
    for n in range(rounds):
        ms, first_bytes, token, count = sync(None)
        first.append(ms)
        if count != items + n:
            raise SystemExit(f"the first sync listed {count} to-dos, not {items + n}")
        ms, base_bytes = page_list()
        base.append(ms)
        ms, still_bytes, same, count = sync(token)
        still.append(ms)
        if same != token or count != 0:
            raise SystemExit("a sync with no change answered something")
        cli("shop", "add", f"bench change {n}")
        ms, moved_bytes, _, count = sync(token)
        moved.append(ms)
        if count != 1:
            raise SystemExit(f"a sync after one change answered {count} to-dos")
    print(json.dumps({
        "items": items, "rounds": rounds,
        "first_ms": statistics.median(first), "first_bytes": first_bytes,
        "page_ms": statistics.median(base), "page_bytes": base_bytes,
        "unchanged_ms": statistics.median(still), "unchanged_bytes": still_bytes,
        "changed_ms": statistics.median(moved), "changed_bytes": moved_bytes,
    }))
finally:
    agent.terminate()
    agent.wait(timeout=30)
