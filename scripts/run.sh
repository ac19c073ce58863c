#!/usr/bin/env bash
# The main job: installs what is missing, builds pulse-peer (release), creates the
# household on first use, and runs the agent on the embedded SQLite database until
# Ctrl-C / SIGTERM. Home: $PULSE_HOME, else ~/.local/share/house-pulse.
# Extra arguments go to `pulse-peer run` (e.g. --peer HOST:PORT, --port N).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="/opt/swift/usr/bin:$PATH"

swift build -c release --static-swift-stdlib --product pulse-peer >&2
bin="$(swift build -c release --static-swift-stdlib --show-bin-path)/pulse-peer"

if ! "$bin" export >/dev/null 2>&1; then
  "$bin" init
  echo "To add another machine: run \`$bin invite\` here and \`pulse-peer join CODE\` there." >&2
fi
exec "$bin" run "$@"
