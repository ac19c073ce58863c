#!/usr/bin/env bash
# The "next" test release: this tree's debug build started with PULSE_NEXT_RELEASE=1
# (Sources/PulseModel/TestRelease.swift), which adds an entity (`note`) and a field
# (`shopping_item.brand`) to the registry, a migration and two API methods (`next.note.add`,
# `next.shop.brand`). The tests of two releases in one household
# (Tests/TwoPeerTests/TwoReleasesTests.swift, Tests/web_phones.py) run it beside the ordinary
# agent: agents of two schemas, no protocol change between them. Never packaged or released
# (a release build has none of it). Builds the debug agent if needed, writes a launcher of it
# as the next release (.build-next/pulse-peer) and prints the launcher's path. One build, not
# two: the launcher costs CI nothing to make.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift build --product pulse-peer >&2
binary="$(swift build --product pulse-peer --show-bin-path)/pulse-peer"
mkdir -p .build-next
launcher="$PWD/.build-next/pulse-peer"
printf '#!/bin/sh\n# The "next" test release (scripts/build-next.sh).\nPULSE_NEXT_RELEASE=1 exec %s "$@"\n' "'$binary'" > "$launcher.tmp"
chmod +x "$launcher.tmp"
mv "$launcher.tmp" "$launcher"
echo "$launcher"
