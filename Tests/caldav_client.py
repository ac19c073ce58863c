"""A real CalDAV client against a real agent (issue 59): the `caldav` library from PyPI, the one
Home Assistant's CalDAV integration uses, given the bare host, an app password and the
household's CA (nothing else trusted). Prints what it found as one JSON document.

Usage: caldav_client.py URL USER PASSWORD CAFILE [HOST=ADDRESS] [--sync=TOKENS-JSON] [--act=ACTIONS-JSON]
ACTIONS: [{"op": "complete"|"uncomplete"|"rename"|"delete"|"add"|"ha_add"|"ha_update", "calendar": NAME,
"summary": S, "to": S, "priority": N, "due": "YYYY-MM-DD", "status": S}] ("add" makes a new to-do
with the library's own UID and name, with PRIORITY and DUE when given; "ha_…" do what Home
Assistant's CalDAV to-do entity does), done before the listing, each answered in "acted" ("ok" or the
error the library raised). Each calendar's "priorities" lists the to-dos that have a PRIORITY.
HOST=ADDRESS resolves HOST (the computer's `.local` name, which its certificate names) to
ADDRESS in this process only, as a phone's resolver would.
"""
import datetime
import json
import socket
import sys

import caldav
from caldav.lib import error

url, user, password, cafile = sys.argv[1:5]
rest = sys.argv[5:]
tokens = {}
actions = []
for arg in rest:
    if "=" in arg and not arg.startswith("--"):
        name, address = arg.split("=", 1)
        real = socket.getaddrinfo

        def resolve(host, *args, _name=name, _address=address, _real=real, **kwargs):
            return _real(_address if host == _name else host, *args, **kwargs)

        socket.getaddrinfo = resolve
    elif arg.startswith("--sync="):
        tokens = json.loads(arg[len("--sync="):])
    elif arg.startswith("--act="):
        actions = json.loads(arg[len("--act="):])



def home_assistant(calendar, action):
    """What Home Assistant's CalDAV to-do entity does (homeassistant/components/caldav/todo.py):
    a new item by save_todo(summary, status); an update finds the to-do by its UID (a
    calendar-query), sets its summary, completes it (a PUT) or sets its status, drops DUE and
    DESCRIPTION it was not given, and saves it again (a second PUT)."""
    if action["op"] == "ha_add":
        calendar.save_todo(summary=action["summary"], status="NEEDS-ACTION")
        return
    found = next(t for t in calendar.todos(include_completed=True)
                 if str(t.icalendar_component.get("SUMMARY")) == action["summary"])
    todo = calendar.todo_by_uid(str(found.icalendar_component.get("UID")))
    vtodo = todo.icalendar_component
    vtodo["SUMMARY"] = action.get("to", action["summary"])
    if action.get("status") == "COMPLETED":
        todo.complete(completion_timestamp=datetime.datetime.now())
    else:
        vtodo["STATUS"] = "NEEDS-ACTION"
    vtodo.pop("DUE", None)
    vtodo.pop("DESCRIPTION", None)
    todo.save(no_create=True, obj_type="todo")


out = {}
try:
    with caldav.DAVClient(url=url, username=user, password=password, ssl_verify_cert=cafile) as client:
        principal = client.principal()
        out["principal"] = str(principal.url)
        calendars = principal.calendars()
        out["acted"] = []
        for action in actions:
            try:
                calendar = next(c for c in calendars if c.get_display_name() == action["calendar"])
                if action["op"] in ("ha_add", "ha_update"):
                    home_assistant(calendar, action)
                    out["acted"].append("ok")
                    continue
                if action["op"] == "add":
                    props = {"summary": action["summary"]}
                    if "priority" in action:
                        props["priority"] = int(action["priority"])
                    if "due" in action:
                        props["due"] = datetime.date.fromisoformat(action["due"])
                    calendar.add_todo(**props)
                    out["acted"].append("ok")
                    continue
                todo = next(t for t in calendar.todos(include_completed=True)
                            if str(t.icalendar_component.get("SUMMARY")) == action["summary"])
                if action["op"] == "complete":
                    todo.complete()
                elif action["op"] == "uncomplete":
                    todo.uncomplete()
                elif action["op"] == "rename":
                    todo.icalendar_component["SUMMARY"] = action["to"]
                    todo.save()
                elif action["op"] == "delete":
                    todo.delete()
                out["acted"].append("ok")
            except Exception as problem:  # what the library raised, said to the test
                out["acted"].append(f"{type(problem).__name__}: {str(problem)[:300]}")
        out["calendars"] = {}
        for calendar in calendars:
            entry = {"url": str(calendar.url), "name": calendar.get_display_name()}
            todos = calendar.todos(include_completed=True)
            entry["todos"] = sorted(
                [str(t.icalendar_component.get("SUMMARY")), str(t.icalendar_component.get("STATUS"))] for t in todos)
            entry["priorities"] = {
                str(t.icalendar_component.get("SUMMARY")): str(t.icalendar_component.get("PRIORITY"))
                for t in todos if t.icalendar_component.get("PRIORITY") is not None}
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
