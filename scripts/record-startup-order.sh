#!/usr/bin/env bash
# Re-records scripts/startup-order.txt: the functions of pulse-peer an agent runs in its
# life at home, as valgrind's callgrind sees them, in the order of the phases that first
# ran them:
#   1. start until idle (serving its web page, advertised over mDNS when an avahi-daemon
#      runs, its one peer offline: the dialer retrying);
#   2. the CLI talking to it: status, a wait, a local write's change notice;
#   3. a session: the peer comes up, the agent dials it, catches up and stays in step;
#   4. the family's web page, loaded as a browser does (sign-in, the page and its assets,
#      the API, the live feed);
#   5. the stop;
# then, natively, the memory check's two states at rest (scripts/record-touched-code.py):
# the functions on pages of code they touched that callgrind did not name join phases 1 and 3.
# scripts/release-build.sh links by the list, so the functions of phase 1 share the fewest
# pages, and those of each later phase sit right after the earlier ones instead of across
# the binary (the bench's idle figures touch phases 1–3 only). Re-recorded only when the
# bench's RSS drifts or before a release, in a commit of its own (docs/decisions/0007); it
# needs valgrind and curl (installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in valgrind curl; do
  command -v "$tool" >/dev/null || { sudo=$([ "$(id -u)" = 0 ] || echo sudo); $sudo apt-get install -y -qq "$tool" >/dev/null; }
done
bash scripts/setup.sh # dbus and an avahi-daemon when none runs: phase 1 records the mDNS path
bash scripts/release-build.sh pulse-peer
export PATH="/opt/swift/usr/bin:$PATH"
built="$(swift build -c release --static-swift-stdlib --show-bin-path)/pulse-peer"
work=$(mktemp -d)
peer_pid="" agent=""
cleanup() {
  for pid in $peer_pid $agent; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# valgrind cannot read the binary's DWARF; the symbol table is enough.
cp "$built" "$work/pulse-peer" && strip --strip-debug "$work/pulse-peer"
bin="$work/pulse-peer"

# Waits (up to $2 s) for a file to hold a line.
wait_for() { for _ in $(seq 1 $(($2 * 5))); do grep -q "$3" "$1" 2>/dev/null && return 0; sleep 0.2; done
             echo "timed out waiting for $3 in $1" >&2; return 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start_peer() {
  "$bin" run --home "$work/peer" --port "$peer_port" --listen 127.0.0.1 --no-mdns --web off \
    > "$work/peer.out" 2> "$work/peer.err" &
  peer_pid=$!
  wait_for "$work/peer.out" 60 '"event":"ready"'
}

# The peer's household, and the recorded agent's home joined to it (pairing).
peer_port=$(free_port)
"$bin" init --home "$work/peer" > /dev/null
start_peer
code=$("$bin" invite --home "$work/peer" | tail -1)
"$bin" join --home "$work/home" --peer "127.0.0.1:$peer_port" "$code" > /dev/null
kill -TERM "$peer_pid"; wait "$peer_pid" || true; rm -f "$work/peer.out"

# With mDNS when an avahi-daemon answers (as an agent runs at home), else without.
mdns=--no-mdns
avahi-daemon --check 2>/dev/null && mdns=""
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
  "$bin" run --home "$work/home" --port 0 --listen 127.0.0.1 $mdns --web 127.0.0.1:0 \
  --peer "127.0.0.1:$peer_port" > "$work/out" 2> "$work/err" &
agent=$!
wait_for "$work/out" 120 '"event":"ready"' || { cat "$work/err" >&2; exit 1; }
sleep 5 # 1: idle, what it does once settled
callgrind_control --dump=idle "$agent" > /dev/null
# 2: the CLI
"$bin" status --home "$work/home" > /dev/null
"$bin" status --home "$work/home" --json > /dev/null
"$bin" status --home "$work/home" --wait disconnected --timeout 60 > /dev/null
"$bin" shop add --home "$work/home" Milk Bread > /dev/null
sleep 2
callgrind_control --dump=control "$agent" > /dev/null
# 3: a session with the peer, which sends a change and receives ours
start_peer
"$bin" shop add --home "$work/peer" Eggs > /dev/null
"$bin" status --home "$work/home" --wait synced --timeout 120 > /dev/null
"$bin" status --home "$work/peer" --wait synced --timeout 120 > /dev/null
sleep 2
callgrind_control --dump=session "$agent" > /dev/null
# 4: the family's web page, as a browser loads it: sign in, the page, its API, the feed.
web=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["web"])' "$work/out")
link=$("$bin" open --home "$work/home" --print | grep -o 'http://[^ ]*')
curl -fsS -c "$work/jar" -b "$work/jar" -o /dev/null "$link"
# The page, its ES modules (every one the agent embeds) and the message catalogue, as a browser loads them.
modules=$(cd Sources/PulseWeb/Resources && ls *.js | sed 's|^|/|')
for path in / /app.css /icon.svg /messages/en.json $modules /api/status; do curl -fsS -b "$work/jar" -o /dev/null "$web$path"; done
csrf=$(curl -fsS -b "$work/jar" "$web/api/session" | python3 -c 'import json, sys; print(json.load(sys.stdin)["csrf"])')
for method in household.get shop.list task.list; do
  curl -fsS -b "$work/jar" -H "Origin: $web" -H "X-Pulse-CSRF: $csrf" -H "Content-Type: application/json" -d '{}' -o /dev/null "$web/api/call/$method"
done
# A refusal (its code and the message rendered from the catalogue).
curl -sS -b "$work/jar" -H "Origin: $web" -H "X-Pulse-CSRF: $csrf" -H "Content-Type: application/json" -d '{}' -o /dev/null "$web/api/call/shop.check"
curl -sS -b "$work/jar" --max-time 2 -o /dev/null "$web/api/events" || true # a live feed, left after 2 s
sleep 2
callgrind_control --dump=web "$agent" > /dev/null
# 5: the stop (the last dump, at exit)
kill -TERM "$agent"; wait "$agent" || true; agent=""

# The functions the agent runs natively at rest that callgrind did not see (another CPU's code
# paths in BoringSSL, other timing): each touched page of code named by none of the phases
# gives its functions, placed after the phase of that state (idle: 1, after a session: 3).
sudo=$([ "$(id -u)" = 0 ] || echo sudo)
$sudo python3 scripts/record-touched-code.py "$bin" "$work/touched.json"

python3 - "$bin" "$work/touched.json" "$work"/callgrind.out.* "$work/callgrind.out" > scripts/startup-order.txt <<'PY'
import json, re, subprocess, sys
ours = set()
for line in subprocess.run(["nm", "--defined-only", sys.argv[1]], capture_output=True, text=True).stdout.splitlines():
    parts = line.split(maxsplit=2)
    if len(parts) == 3 and parts[1] in "tTwW": ours.add(parts[2])
touched = json.load(open(sys.argv[2]))
# The dumps in the order they were written (callgrind.out.1, .2, …, then the one at exit).
dumps = sorted(sys.argv[3:-1], key=lambda path: int(path.rsplit(".", 1)[1])) + sys.argv[-1:]
phases = []
for path in dumps:
    ran = set()
    for line in open(path):
        match = re.match(r"^c?fn=\(\d+\) (.+)$", line.rstrip("\n"))
        if match: ran.add(match.group(1))
    phases.append((path.rsplit('/', 1)[1], ran & ours))
recorded = set().union(*(ran for _, ran in phases))
def native(figure):
    """The functions of the pages the native agent touched in that state that no phase names."""
    return ("native: " + figure, {name for page in touched[figure] if not recorded.intersection(page) for name in page})
phases.insert(1, native("idle, no peer"))
phases.insert(4, native("idle after a session with a peer"))
placed = set()
for label, ran in phases:
    phase = sorted(ran - placed)
    placed.update(phase)
    print(f"{label}: {len(phase)} functions", file=sys.stderr)
    if phase: print("\n".join(phase))
PY
echo "scripts/startup-order.txt: $(wc -l < scripts/startup-order.txt) functions" >&2
