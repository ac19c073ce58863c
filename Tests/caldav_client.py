"""A real CalDAV client against a real agent (issue 59): the `caldav` library from PyPI, the one
Home Assistant's CalDAV integration uses, given the bare host, an app password and the
household's CA (nothing else trusted). Prints what it found as one JSON document.

Usage: caldav_client.py URL USER PASSWORD CAFILE [HOST=ADDRESS] [--sync TOKEN-JSON]
HOST=ADDRESS resolves HOST (the computer's `.local` name, which its certificate names) to
ADDRESS in this process only, as a phone's resolver would.
"""
import json
import socket
import sys

import caldav
from caldav.lib import error

url, user, password, cafile = sys.argv[1:5]
rest = sys.argv[5:]
tokens = {}
for arg in rest:
    if "=" in arg and not arg.startswith("--"):
        name, address = arg.split("=", 1)
        real = socket.getaddrinfo

        def resolve(host, *args, _name=name, _address=address, _real=real, **kwargs):
            return _real(_address if host == _name else host, *args, **kwargs)

        socket.getaddrinfo = resolve
    elif arg.startswith("--sync="):
        tokens = json.loads(arg[len("--sync="):])

out = {}
try:
    with caldav.DAVClient(url=url, username=user, password=password, ssl_verify_cert=cafile) as client:
        principal = client.principal()
        out["principal"] = str(principal.url)
        calendars = principal.calendars()
        out["calendars"] = {}
        for calendar in calendars:
            entry = {"url": str(calendar.url), "name": calendar.get_display_name()}
            todos = calendar.todos(include_completed=True)
            entry["todos"] = sorted(
                [str(t.icalendar_component.get("SUMMARY")), str(t.icalendar_component.get("STATUS"))] for t in todos)
            entry["open"] = sorted(str(t.icalendar_component.get("SUMMARY")) for t in calendar.todos())
            collection = calendar.objects_by_sync_token(sync_token=tokens.get(str(calendar.url)), load_objects=True)
            entry["token"] = collection.sync_token
            entry["synced"] = sorted(str(o.icalendar_component.get("SUMMARY")) for o in collection.objects if o.data)
            out["calendars"][entry["name"]] = entry
except error.AuthorizationError as problem:
    out["error"] = "authorization"
    out["detail"] = str(problem)[:300]
except Exception as problem:  # what a client meets, said to the test
    out["error"] = type(problem).__name__
    out["detail"] = str(problem)[:600]
print(json.dumps(out, indent=1, sort_keys=True))
