#!/usr/bin/env bash
# Benchmarks (docs/PERFORMANCE.md): builds in release and prints the table of figures,
# each beside its baseline measured in the same run, and a verdict per target. Options:
# --quick (small sizes), --large (a 1M-change catch-up for the footprint figure), --trace,
# --only FIGURE,… (a subset).
# `--compare REV [--runs N]`: builds REV too (its tree under .build-compare/), then runs the
# two builds alternately, N times each (3 by default), with the other options (name figures
# with --only: a full run takes minutes), and prints every figure's values of both side by
# side — ranges to compare, since one run proves little on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
compare=""; runs=3; args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compare) [ $# -ge 2 ] || { echo "bench.sh: --compare needs a revision" >&2; exit 2; }; compare=$2; shift 2 ;;
    --runs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: --runs needs a count" >&2; exit 2; }; runs=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
bash scripts/setup.sh
export PATH="/opt/swift/usr/bin:$PATH"
bash scripts/release-build.sh pulse-peer pulse-bench # as run.sh builds the agent
bin="$(swift build -c release --static-swift-stdlib --show-bin-path)"
[ -n "$compare" ] || exec "$bin/pulse-bench" "${args[@]}"

rev=$(git rev-parse --verify --short "$compare^{commit}") || { echo "bench.sh: no revision $compare" >&2; exit 2; }
here=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo "+changes")
tree="$PWD/.build-compare/$rev"
if [ ! -f "$tree/Package.swift" ]; then
  rm -rf "$tree"; mkdir -p "$tree"
  git archive "$rev" | tar -x -C "$tree"
fi
echo "bench.sh: building $rev in $tree" >&2
(cd "$tree" && bash scripts/release-build.sh pulse-peer pulse-bench)
other="$(cd "$tree" && swift build -c release --static-swift-stdlib --show-bin-path)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((i = 1; i <= runs; i++)); do
  for side in "$rev" "$here"; do
    echo "bench.sh: run $i of $runs, $side" >&2
    if [ "$side" = "$rev" ]; then dir=$tree; exe=$other/pulse-bench; else dir=$PWD; exe=$bin/pulse-bench; fi
    # pulse-bench prints "· figure: measured | baseline" on its error stream as it measures.
    (cd "$dir" && "$exe" "${args[@]}" 2>&1 > /dev/null) | tee "$out/$side.$i" >&2 || echo "bench.sh: that run failed" >&2
  done
done
python3 - "$out" "$rev" "$here" "$runs" <<'PY'
import os, sys
out, sides, runs = sys.argv[1], sys.argv[2:4], int(sys.argv[4])
figures = {}
for side in sides:
    for i in range(1, runs + 1):
        path = os.path.join(out, f"{side}.{i}")
        for line in open(path, encoding="utf-8", errors="replace") if os.path.exists(path) else []:
            # "· figure: measured | baseline": a figure's name may hold ": " itself, its value not.
            measured, bar, baseline = line[2:].rstrip("\n").partition(" | ")
            figure, colon, value = measured.rpartition(": ")
            if line.startswith("· ") and colon:
                figures.setdefault(figure, {s: [] for s in sides})[side].append(value + (f" ({baseline})" if bar else ""))
for figure, values in figures.items():
    print(f"\n{figure}")
    for side in sides:
        print(f"  {side:>16}: " + "  ·  ".join(values[side] or ["(none)"]))
PY
