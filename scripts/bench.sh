#!/usr/bin/env bash
# Benchmarks (docs/PERFORMANCE.md): builds in release and prints the table of figures,
# each beside its baseline measured in the same run. Options: --quick (small sizes),
# --large (a 1M-change catch-up for the footprint figure).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="/opt/swift/usr/bin:$PATH"
bash scripts/release-build.sh pulse-peer pulse-bench # as run.sh builds the agent
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/pulse-bench" "$@"
