#!/usr/bin/env bash
# Builds the "next" test release: this tree compiled with PULSE_NEXT_RELEASE, which adds an
# entity (`note`) and a field (`shopping_item.quantity`) to the registry, a migration and two
# API methods (`next.note.add`, `next.shop.quantity`). The tests of two releases in one
# household (Tests/TwoPeerTests/TwoReleasesTests.swift) run it beside the ordinary build:
# agents of two schemas, no protocol change between them. Never packaged or released.
# Prints the binary's path. Its own build directory (.build-next): the ordinary one is untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift build --build-path .build-next --product pulse-peer -Xswiftc -DPULSE_NEXT_RELEASE >&2
echo "$(swift build --build-path .build-next --product pulse-peer -Xswiftc -DPULSE_NEXT_RELEASE --show-bin-path)/pulse-peer"
