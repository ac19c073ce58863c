#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine or a developer's: installs what is
# missing (scripts/setup.sh), builds, and runs every test (unit and multi-process, the page's
# modules, and the Debian package's).
# `--fast`: the unit tests only (Tests/PeerSyncTests: no agent processes, no root, no
# browser, no network namespaces), for the inner loop; CI runs everything.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi
if [ "$fast" -eq 1 ]; then
  # Only what the build needs; installed (with root or sudo) only when missing.
  for pkg in libsqlite3-dev libavahi-client-dev libdbus-1-dev pkg-config python3; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || { bash scripts/setup.sh; break; }
  done
  set -- --filter PeerSyncTests "$@"
else
  # What the build needs first (seconds); what only the tests use (`--tests`: browsers, PyPI, …)
  # below — in the whole suite, while the previous release builds.
  bash scripts/setup.sh
fi
export PATH="/opt/swift/usr/bin:$PATH"
# Where the time goes (CI must stay under 45 min): one line per part, and the total at the end.
mark=$SECONDS
took() { echo "time: $1 took $((SECONDS - mark)) s"; mark=$SECONDS; }
took "set-up"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
# The layers: a target imports only the targets it declares (scripts/check-imports.py), and
# the check refuses a bad import planted in a copy (so it cannot pass by checking nothing).
python3 scripts/check-imports.py || status=1
plant=$(mktemp -d)
cp -r Package.swift Sources Tests "$plant"/
sed -i '1i import PulseStore' "$plant/Sources/PulseWeb/WebRouter.swift"
planted=$(python3 scripts/check-imports.py "$plant" 2>&1 || true)
if [[ "$planted" != *"Sources/PulseWeb/WebRouter.swift:1: PulseWeb imports PulseStore"* ]]; then
  echo "scripts/check-imports.py let a planted bad import (PulseWeb → PulseStore) through" >&2
  status=1
fi
rm -rf "$plant"
# The format (.swift-format, the toolchain's swift-format): `swift format -i -r Sources Tests Plugins Package.swift` fixes it.
if ! swift format lint --strict -r Sources Tests Plugins Package.swift > "$log" 2>&1; then
  head -40 "$log"
  echo "the code is not formatted: run  swift format -i -r Sources Tests Plugins Package.swift" >&2
  status=1
fi
# The compiler holds the layers too: importing a target outside the dependencies fails the build.
run_swift_tests() { swift test --explicit-target-dependency-import-check error "$@" 2>&1 | tee -a "$log" || status=$?; }
: > "$log"
if [ "$fast" -eq 0 ] && [ $# -eq 0 ]; then
  # Two runs: the unit tests' async waits never share one process's cooperative thread pool
  # (2 threads on 2 cores) with the multi-process tests, whose synchronous waits on agents and
  # browsers hold a thread for a minute at a time (a unit test's 30 s deadline once ran out so).
  # The previous release (the newest tag before HEAD: scripts/build-release.sh, docs/RELEASING.md)
  # for the tests of old and new agents in one household (PreviousReleaseTests); "none" when
  # HEAD is the first release. Built first, in this tree's own `.build`: the dependencies it
  # compiles are this tree's too (the same pinned versions), so the build below compiles only
  # our modules (≈ 6 minutes of CI saved); its binary is kept apart (.build-releases/TAG).
  # The test-only packages install meanwhile: on a fresh machine minutes of the network and the
  # disk (apt, PyPI) beside the build's CPU (they add nothing the build uses).
  bash scripts/setup.sh --tests > "$log.setup" 2>&1 &
  setup_tests=$!
  if previous=$(PULSE_RELEASE_SCRATCH="$PWD/.build" bash scripts/build-release.sh previous 2>> "$log"); then export PULSE_PREVIOUS_BINARY="$previous"; else
    echo "the previous release did not build (scripts/build-release.sh previous): see above" >&2; tail -30 "$log" >&2; status=1
  fi
  took "the previous release's build"
  if ! wait "$setup_tests"; then
    cat "$log.setup"; echo "scripts/setup.sh --tests failed: see above" >&2; exit 1
  fi
  cat "$log.setup"; rm -f "$log.setup"
  took "the rest of the tests' set-up"
  run_swift_tests --filter PeerSyncTests
  took "the build and the unit tests"
  # The "next" test release (scripts/build-next.sh) for the tests of two releases in one
  # household (TwoReleasesTests): this build started as that release, no second build.
  if next=$(bash scripts/build-next.sh 2>> "$log"); then export PULSE_NEXT_BINARY="$next"; else
    echo "the next test release did not build (scripts/build-next.sh): see above" >&2; tail -30 "$log" >&2; status=1
  fi
  # The Debian package's two release builds (≈ 12 min of CPU) beside the multi-process tests,
  # given only the CPU and disk those leave: SCHED_IDLE (`chrt --idle`, which the compiler's jobs
  # inherit — measured: swift-build gives its jobs niceness 0 again, so `nice` would compete with
  # the tests, as a clean-clone run showed: 1394 s instead of 775) and the idle I/O class; where
  # SCHED_IDLE cannot be had, after them as before. Tests/package_test.py reuses them, below.
  package_build=""
  if [ "$(id -u)" -eq 0 ] && chrt --idle 0 true 2>/dev/null; then
    low=(chrt --idle 0); if ionice -c 3 true 2>/dev/null; then low+=(ionice -c 3); fi
    "${low[@]}" python3 Tests/package_test.py --build-only "$PWD/.build/package-test" > "$log.package-build" 2>&1 &
    package_build=$!
  fi
  run_swift_tests --skip-build --filter TwoPeerTests
  took "the multi-process tests"
  if [ -n "$package_build" ]; then
    wait "$package_build" || { cat "$log.package-build"; echo "the Debian package's build failed (Tests/package_test.py --build-only)" >&2; status=1; package_build=failed; }
    rm -f "$log.package-build"
    took "the rest of the Debian package's build"
  fi
else
  [ "$fast" -eq 1 ] || bash scripts/setup.sh --tests
  run_swift_tests "$@"
fi

# The page's modules type-checked (JSDoc, no build step: Tests/page/tsconfig*.json), with Debian's
# TypeScript compiler (node-typescript): no error, in both lanes.
if command -v tsc >/dev/null 2>&1; then
  for project in Tests/page/tsconfig.json Tests/page/tsconfig.sw.json; do
    tsc -p "$project" > "$log.tsc" 2>&1 || { cat "$log.tsc"; echo "the page's modules do not type-check (tsc -p $project)" >&2; status=1; }
  done
  rm -f "$log.tsc"
  echo "page modules type-checked (tsc --checkJs)"
elif [ "$fast" -eq 0 ]; then
  echo "tsc is missing: the page's modules cannot be type-checked (scripts/setup.sh --tests installs node-typescript)" >&2; status=1
else
  echo "page modules not type-checked: no tsc here (apt install node-typescript)"
fi

# The page's pure modules (Tests/page: messages, the state store), in node, no browser.
page_passed=0; page_failed=0
if command -v node >/dev/null 2>&1; then
  node --test --test-reporter=tap Tests/page/*.test.mjs > "$log.page" 2>&1 || status=$?
  page_passed=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log.page"); page_failed=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log.page")
  [ "${page_failed:-1}" -eq 0 ] || cat "$log.page"
  echo "page modules (node --test): ${page_passed:-0} passed, ${page_failed:-?} failed"
  rm -f "$log.page"
elif [ "$fast" -eq 0 ]; then
  echo "node is missing: the page's module tests cannot run (scripts/setup.sh --tests installs nodejs)" >&2; status=1
else
  echo "page modules skipped: no node here (apt install nodejs)"
fi

# The Debian package, end to end (Tests/package_test.py): built from a clean checkout of HEAD
# (a release build: minutes the first time, reused after), inspected, installed, upgraded and
# removed as a family member's account. It installs a package and makes a user: root only.
package_passed=0; package_failed=0
if [ "$fast" -eq 0 ] && [ $# -eq 0 ]; then
  if [ "${package_build:-}" = failed ]; then
    echo "the Debian package's test skipped: its build failed (above)"
  elif [ "$(id -u)" -eq 0 ]; then
    python3 Tests/package_test.py "$PWD/.build/package-test" > "$log.package" 2>&1 || status=1
    package_passed=$(sed -n 's/^package: \([0-9]*\) passed.*/\1/p' "$log.package"); package_failed=$(sed -n 's/^package: [0-9]* passed, \([0-9]*\) failed$/\1/p' "$log.package")
    cat "$log.package"
    echo "the Debian package (Tests/package_test.py): ${package_passed:-0} passed, ${package_failed:-?} failed"
    took "the Debian package's test"
    rm -f "$log.package"
  else
    echo "the Debian package's test skipped: it needs root (it installs the package and makes a user)"
  fi
fi

# One plain closing line, whatever the runners printed. The total comes from swift-testing's
# own "Test run with N tests" (a per-test line can be cut by another test's output printed
# into it, so counting those lines undercounts).
total=$(grep -oE 'Test run with [0-9]+ tests' "$log" | grep -oE '[0-9]+' | awk '{ n += $1 } END { print n + 0 }')
swift_failed=$(grep -E '^. Test .* failed after' "$log" | grep -vc '^. Test run with' || true)
passed=$(( ${total:-0} - ${swift_failed:-0} + ${page_passed:-0} + ${package_passed:-0} ))
failed=$(( ${swift_failed:-0} + ${page_failed:-0} + ${package_failed:-0} ))
# What failed, again at the end where a reader of the log's tail sees it (each failed
# expectation's line, with its values).
if [ "${swift_failed:-0}" -ne 0 ]; then
  echo "the failed expectations:"
  grep -E -A12 '^. Test .* recorded an issue' "$log" | cut -c1-1500 | head -150
fi
echo "tests: ${passed} passed, ${failed} failed (in $((SECONDS / 60)) min $((SECONDS % 60)) s)"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then exit 1; fi
if [ "$passed" -eq 0 ]; then echo "no test ran" >&2; exit 1; fi
