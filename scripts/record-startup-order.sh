#!/usr/bin/env bash
# Re-records scripts/startup-order.txt: the functions of pulse-peer that an agent runs from
# its start until it is idle, serving its web page (and at its stop), as valgrind's
# callgrind sees them. Run after large changes to start-up; scripts/release-build.sh links
# by the list. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { sudo=$([ "$(id -u)" = 0 ] || echo sudo); $sudo apt-get install -y -qq valgrind >/dev/null; }
bash scripts/release-build.sh pulse-peer
export PATH="/opt/swift/usr/bin:$PATH"
built="$(swift build -c release --static-swift-stdlib --show-bin-path)/pulse-peer"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind cannot read the binary's DWARF; the symbol table is enough.
cp "$built" "$work/pulse-peer" && strip --strip-debug "$work/pulse-peer"
"$work/pulse-peer" init --home "$work/home" >/dev/null
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
  "$work/pulse-peer" run --home "$work/home" --port 0 --listen 127.0.0.1 --no-mdns --web 127.0.0.1:0 \
  > "$work/out" 2> "$work/err" &
agent=$!
for _ in $(seq 1 300); do grep -q '"event":"ready"' "$work/out" && break; sleep 0.2; done
grep -q '"event":"ready"' "$work/out" || { cat "$work/err" >&2; kill "$agent"; exit 1; }
sleep 5 # idle: what it does once settled
kill -TERM "$agent"; wait "$agent" || true
python3 - "$work/callgrind.out" "$work/pulse-peer" > scripts/startup-order.txt <<'PY'
import re, subprocess, sys
ran = set()
for line in open(sys.argv[1]):
    match = re.match(r"^c?fn=\(\d+\) (.+)$", line.rstrip("\n"))
    if match: ran.add(match.group(1))
ours = set()
for line in subprocess.run(["nm", "--defined-only", sys.argv[2]], capture_output=True, text=True).stdout.splitlines():
    parts = line.split(maxsplit=2)
    if len(parts) == 3 and parts[1] in "tTwW": ours.add(parts[2])
print("\n".join(sorted(ran & ours)))
PY
echo "scripts/startup-order.txt: $(wc -l < scripts/startup-order.txt) functions" >&2
