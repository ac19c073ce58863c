#!/usr/bin/env bash
# The main job: installs what is missing, builds pulse-peer (release), installs it as
# ~/.local/bin/pulse-peer, and runs the agent (on a new computer, first the page's welcome:
# start a household or join one) on the
# embedded SQLite database until Ctrl-C / SIGTERM. Home: $PULSE_HOME, else
# ~/.local/share/house-pulse. Extra arguments go to `pulse-peer run` (e.g. --peer HOST:PORT).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="/opt/swift/usr/bin:$PATH"

bash scripts/release-build.sh pulse-peer # function sections, start-up code together
built="$(swift build -c release --static-swift-stdlib --show-bin-path)/pulse-peer"
echo "Built $built" >&2

# Where a person's shell finds it: ~/.local/bin (copied beside, then renamed into place,
# so a running agent's binary is never rewritten under it).
bindir="$HOME/.local/bin"
mkdir -p "$bindir"
cp "$built" "$bindir/.pulse-peer.new" && mv -f "$bindir/.pulse-peer.new" "$bindir/pulse-peer"
bin="$bindir/pulse-peer"
echo "Installed $bin" >&2
case ":$PATH:" in
  *":$bindir:"*) ;;
  *) echo "Note: $bindir is not on your PATH; add it (e.g. in ~/.profile: export PATH=\"\$HOME/.local/bin:\$PATH\") to type \`pulse-peer\`." >&2 ;;
esac

# No household yet: the agent serves the page's welcome (start one, or join the family's from
# another computer) — never a household of its own that the family's others would not know.
if ! "$bin" export >/dev/null 2>&1; then
  echo "No household on this computer yet: open the page (\`pulse-peer open\`) to start one or join one" >&2
  echo "(or in a terminal: \`pulse-peer init\`, or \`pulse-peer invite\` on the other computer and \`pulse-peer join CODE\` here)." >&2
fi
echo "To keep the agent running in the background instead: \`pulse-peer service install\`." >&2
exec "$bin" run "$@"
