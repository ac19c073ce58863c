#!/usr/bin/env bash
# Installs what pulse-peer needs on a Debian machine, idempotently:
# the system libraries it links (SQLite, Avahi, D-Bus, libqrencode) and the daemons discovery talks to.
# Starts dbus and avahi-daemon only when none is running (a desktop with systemd
# already runs them: they are reused). `--tests` adds what only the tests use:
# libfaketime (a machine whose clock is wrong), iproute2 and nftables (network namespaces,
# links cut and netem loss for partitions), openssl and python3 (the hostile peer of the security tests),
# python3-dbus and python3-gi (the stand-in desktop notification service of the notification tests),
# chromium, chromium-driver and Selenium from PyPI (the web page's tests in a real browser),
# an emoji font (the page's tab icons, in its screenshots), nodejs (`node --test` runs the
# page's pure modules, Tests/page) and node-typescript (`tsc` type-checks them), and zbar-tools and librsvg2-bin (a QR code drawn as SVG is
# rendered and decoded back), and libnss3-tools (`certutil`: the phone browser of the phone
# tests trusts the household CA through its own NSS database); and for the Debian package's test
# (Tests/package_test.py): help2man, lintian, binutils and desktop-file-utils (the package made and
# checked), systemd and util-linux (a family member's user manager: `systemd --user`, runuser, unshare);
# and webkit2gtk-driver with xvfb (the phone app on WebKitGTK, Safari's engine family: Tests/web_phone_engines.py),
# and locales (the locale sources a test's own Polish or German locale is made from: WebKitGTK
# takes its languages from its locale; the machine's own locales are left as they are); and
# vdirsyncer and todoman (CalDAV clients nobody here wrote, against a real agent: CalDAVTests).
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

packages=(libsqlite3-dev libavahi-client-dev libdbus-1-dev libqrencode-dev avahi-daemon avahi-utils dbus pkg-config python3)
if [ "${1:-}" = "--tests" ]; then packages+=(faketime iproute2 nftables openssl python3 python3-dbus python3-gi chromium chromium-driver firefox-esr fonts-noto-color-emoji nodejs node-typescript zbar-tools librsvg2-bin libnss3-tools help2man lintian binutils desktop-file-utils systemd util-linux webkit2gtk-driver xvfb locales vdirsyncer todoman); fi
need=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Selenium drives the browser from the python3 the tests run (it is on PATH first).
if [ "${1:-}" = "--tests" ] && ! python3 -c 'import selenium' >/dev/null 2>&1; then
  echo "setup: installing selenium (PyPI)" >&2
  python3 -m pip install -q --disable-pip-version-check selenium 2>/dev/null \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages selenium
fi

# axe-core, the accessibility rules engine (WCAG 2.2 AA: Tests/web_accessibility.py), as the
# axe.min.js inside this PyPI wheel (no npm here; its Playwright is not needed: --no-deps).
if [ "${1:-}" = "--tests" ] && ! python3 -c 'import axe_playwright_python' >/dev/null 2>&1; then
  echo "setup: installing axe-core (axe-playwright-python, PyPI)" >&2
  python3 -m pip install -q --disable-pip-version-check --no-deps axe-playwright-python==0.1.8 2>/dev/null \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages --no-deps axe-playwright-python==0.1.8
fi

# Firefox ESR is driven by Mozilla's own Marionette client (geckodriver is neither in Debian nor
# on PyPI: Tests/web_support.py's Firefox, Tests/web_keyboard.py).
if [ "${1:-}" = "--tests" ] && ! python3 -c 'import marionette_driver' >/dev/null 2>&1; then
  echo "setup: installing marionette-driver (PyPI)" >&2
  python3 -m pip install -q --disable-pip-version-check marionette-driver==3.7.1 2>/dev/null \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages marionette-driver==3.7.1
fi

# The caldav library, the CalDAV client Home Assistant's integration uses: a real client the
# CalDAV tests drive against a real agent (issue 59, Tests/caldav_client.py).
if [ "${1:-}" = "--tests" ] && ! python3 -c 'import caldav' >/dev/null 2>&1; then
  echo "setup: installing caldav (PyPI)" >&2
  python3 -m pip install -q --disable-pip-version-check caldav==3.6.0 2>/dev/null \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages caldav==3.6.0
fi

# The web page's default port (47654) lies inside Linux's ephemeral range: as root, keep the
# kernel from handing it to a connection or a port-0 listener of the many agents the tests
# start, so the test that takes it on purpose never waits on a stranger (it once waited 30 s
# in vain). A runtime setting of this boot, not persisted; skipped where it cannot be set.
if [ "${1:-}" = "--tests" ] && [ "$(id -u)" -eq 0 ]; then
  reserved=$(sysctl -n net.ipv4.ip_local_reserved_ports 2>/dev/null || true)
  case ",$reserved," in
    *,47654,*) ;;
    *) sysctl -qw net.ipv4.ip_local_reserved_ports="${reserved:+$reserved,}47654" >/dev/null 2>&1 || true ;;
  esac
fi

if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then export PATH="/opt/swift/usr/bin:$PATH"
  else echo "setup: the Swift 6 toolchain is required (https://www.swift.org/install/linux/)" >&2; exit 1; fi
fi

# The system bus and the Avahi daemon: reuse running ones, start them otherwise.
bus_up() { dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId >/dev/null 2>&1; }
avahi_up() { dbus-send --system --print-reply --dest=org.freedesktop.Avahi / org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'; }

if ! bus_up; then
  $SUDO mkdir -p /run/dbus
  $SUDO rm -f /run/dbus/pid
  $SUDO dbus-daemon --system --fork >/dev/null
fi
if ! avahi_up; then
  # No daemon runs (a machine without systemd: a container, CI). Start one, confined to
  # the interfaces in $PULSE_MDNS_INTERFACES (comma-separated, or "all"); by default
  # loopback only, so nothing is announced on a network nobody asked us to join.
  # A desktop's own avahi-daemon is reused as it is and never reconfigured.
  conf_dir=/run/house-pulse
  $SUDO mkdir -p "$conf_dir"
  interfaces="${PULSE_MDNS_INTERFACES:-lo}"
  {
    echo "[server]"
    [ "$interfaces" = "all" ] || echo "allow-interfaces=$interfaces"
    echo "use-ipv6=$([ "$interfaces" = "lo" ] && echo no || echo yes)"
    echo "enable-dbus=yes"
    echo "[wide-area]"
    echo "enable-wide-area=no"
    echo "[publish]"
    echo "publish-workstation=no"
  } | $SUDO tee "$conf_dir/avahi-daemon.conf" >/dev/null
  $SUDO avahi-daemon -D -f "$conf_dir/avahi-daemon.conf" >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do avahi_up && break; sleep 0.1; done
  avahi_up || echo "setup: avahi-daemon did not come up; discovery will be unavailable" >&2
fi
