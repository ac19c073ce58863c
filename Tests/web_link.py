#!/usr/bin/python3
"""Opens a sign-in link in headless Chromium, as a person's browser would (a click on a
notification, House Pulse from the applications menu), and prints what the person sees as
one JSON line: {"signedIn": bool, "tab": the visible tab's name, "hash": location.hash,
"shows": whether TEXT appeared in that tab}.

  web_link.py LINK [TEXT]
"""
import json
import sys

from web_support import Failed, browser, wait

link = sys.argv[1]
text = sys.argv[2] if len(sys.argv) > 2 else None
driver = browser()
try:
    driver.get(link)

    def settled():
        return driver.execute_script("""
            const out = document.getElementById('signed-out');
            if (out && !out.hidden) return {signedIn: false};
            const tab = document.querySelector('.tab:not([hidden])');
            if (!tab) return null;
            const seen = arguments[0] === null || tab.innerText.includes(arguments[0]);
            if (!seen) return null;
            return {signedIn: true, tab: tab.id.replace(/^tab-/, ''), hash: location.hash, shows: seen};
        """, text)

    try:
        seen, _ = wait("the page, signed in or not", settled, timeout=20)
    except Failed as failure:
        seen = {"signedIn": False, "error": str(failure), "url": driver.current_url}
    print(json.dumps(seen), flush=True)
finally:
    driver.quit()
