#!/usr/bin/env bash
# The main job: installs what is missing, builds pulse-peer (release), creates the
# household on first use, and runs it on the embedded SQLite database.
# Home: $PULSE_HOME, else ~/.local/share/house-pulse. Extra arguments go to pulse-peer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="/opt/swift/usr/bin:$PATH"

swift build -c release --product pulse-peer >&2
bin="$(swift build -c release --show-bin-path)/pulse-peer"

if ! "$bin" export >/dev/null 2>&1; then
  "$bin" init
fi
exec "$bin" export "$@"
