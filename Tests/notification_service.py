#!/usr/bin/python3
"""A stand-in for the desktop's notification service, for the notification tests: owns
org.freedesktop.Notifications on the session bus given by DBUS_SESSION_BUS_ADDRESS and
appends every Notify call it receives to RECORD as one JSON object per line. Debian's
python3-dbus and python3-gi (an implementation of D-Bus independent of ours).
A person's click is the test's call of house.pulse.Test.Click(id): the service emits
ActionInvoked(id, "default") then NotificationClosed(id, 2), as a desktop does;
house.pulse.Test.Invoke(id, action) emits ActionInvoked(id, action) alone.

  notification_service.py RECORD
Prints "ready" once it owns the name.
"""
import json, sys
import dbus, dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

record = sys.argv[1]

class Notifications(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.next_id = 0

    @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout):
        if replaces_id:
            nid = int(replaces_id)
        else:
            self.next_id += 1
            nid = self.next_id
        with open(record, "a") as f:
            f.write(json.dumps({"app": str(app_name), "replaces": int(replaces_id), "id": nid, "summary": str(summary),
                                "body": str(body), "hints": {str(k): str(v) for k, v in hints.items()},
                                "actions": [str(a) for a in actions],
                                "timeout": int(expire_timeout)}) + "\n")
        return dbus.UInt32(nid)

    @dbus.service.signal("org.freedesktop.Notifications", signature="us")
    def ActionInvoked(self, nid, action):
        pass

    @dbus.service.signal("org.freedesktop.Notifications", signature="uu")
    def NotificationClosed(self, nid, reason):
        pass

    @dbus.service.method("house.pulse.Test", in_signature="u", out_signature="")
    def Click(self, nid):
        self.ActionInvoked(nid, "default")
        self.NotificationClosed(nid, 2)

    @dbus.service.method("house.pulse.Test", in_signature="us", out_signature="")
    def Invoke(self, nid, action):
        self.ActionInvoked(nid, action)

    @dbus.service.method("org.freedesktop.Notifications", in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body", "actions"]

    @dbus.service.method("org.freedesktop.Notifications", in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("stand-in", "house-pulse-tests", "1", "1.2")

DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
name = dbus.service.BusName("org.freedesktop.Notifications", bus)
service = Notifications(bus)
print("ready", flush=True)
GLib.MainLoop().run()
