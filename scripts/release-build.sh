#!/usr/bin/env bash
# The release build of run.sh and bench.sh: `release-build.sh PRODUCT...` (binaries in
# `swift build -c release --static-swift-stdlib --show-bin-path`). Every function gets a
# section of its own and lld places the functions an agent runs at start together
# (scripts/startup-order.txt, made by scripts/record-startup-order.sh), with the functions
# that have no symbol just before them (scripts/release-link.ld): an idle agent then maps
# ≈ 5.3 MB of our code instead of ≈ 19 (docs/PERFORMANCE.md, "Idle RSS"). A function missing
# from the list (renamed since it was recorded) only lands elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# The list and the linker script under names of their content: SwiftPM relinks when a flag
# changes, not when a file a flag names does.
mkdir -p .build
order="$PWD/.build/startup-order-$(sha256sum scripts/startup-order.txt | cut -c1-16).txt"
[ -f "$order" ] || cp scripts/startup-order.txt "$order"
script="$PWD/.build/release-link-$(sha256sum scripts/release-link.ld | cut -c1-16).ld"
[ -f "$script" ] || cp scripts/release-link.ld "$script"
# LLVM's function merging is off: it turns identical functions into thunks to a body of
# its own that has no name (`.L__unnamed_N`), which no order can name, so the bodies an
# agent runs at start were left scattered over the binary (docs/PERFORMANCE.md).
compile=(-c release --static-swift-stdlib
         -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
         -Xswiftc -Xfrontend -Xswiftc -disable-llvm-merge-functions-pass)
flags=("${compile[@]}" -Xswiftc -use-ld=lld
       -Xlinker "--symbol-ordering-file=$order" -Xlinker --no-warn-symbol-ordering -Xlinker -T -Xlinker "$script"
       -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic)
# Swift's multi-threaded whole-module build keeps an object file whose IR has not changed,
# even when the code-generation flags have (found: objects of a build made before
# -function-sections stayed one `.text` each, so the order above could not place their
# functions). A release tree last built with other flags is rebuilt from scratch.
stamp=.build/release-build.flags
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
if [ "$(cat "$stamp" 2>/dev/null)" != "${compile[*]}" ]; then
  [ -d "$bin" ] && echo "release-build: flags changed since the last release build; building from scratch" >&2
  rm -rf "$bin"
fi
for product in "$@"; do
  swift build "${flags[@]}" --product "$product" >&2
done
echo "${compile[*]}" > "$stamp"
