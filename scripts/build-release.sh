#!/usr/bin/env bash
# Builds a tagged release's agent for the tests of old and new agents in one household
# (Tests/TwoPeerTests/PreviousReleaseTests.swift, docs/RELEASING.md).
#   scripts/build-release.sh vX.Y.Z     that release
#   scripts/build-release.sh previous   the newest release before HEAD (HEAD itself excluded)
# Prints the binary's path, or "none" when there is no release before HEAD. The release's
# commit comes from its tag, else from docs/releases.tsv (a clone without tags); both present,
# they must agree. A clean copy of that commit (git archive), stamped with its version and
# commit as the .deb is, built in debug (`pulse-peer` only), its binary kept as
# .build-releases/TAG/pulse-peer: reused while the commit is the same (a developer's second run
# costs nothing).
# PULSE_RELEASE_SCRATCH=DIR builds in that scratch directory instead of .build-releases/TAG/build:
# scripts/test.sh passes its own `.build` and builds the release first, so that the dependencies
# (the same versions, pinned) are compiled once for both (measured: the suite's build then took
# 234 s instead of ≈ 600, the release's 409 s as before); the tree's own build then recompiles only
# its own modules.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
want="${1:?usage: scripts/build-release.sh vX.Y.Z|previous}"
head="$(git rev-parse HEAD)"

commit_of() { # the release's commit: its tag, else the table; refuses a disagreement
    local tag="$1" tagged recorded
    tagged="$(git rev-parse -q --verify "refs/tags/$tag^{commit}" 2>/dev/null || true)"
    recorded="$(awk -F'\t' -v t="$tag" '$1 == t { print $2 }' docs/releases.tsv)"
    if [ -n "$tagged" ] && [ -n "$recorded" ] && [ "$tagged" != "$recorded" ]; then
        echo "build-release: tag $tag is $tagged but docs/releases.tsv says $recorded" >&2; exit 1
    fi
    echo "${tagged:-$recorded}"
}

if [ "$want" = previous ]; then
    tag=""
    # Newest last in the table: the last release whose commit is in HEAD's history, not HEAD.
    while IFS=$'\t' read -r name _ _; do
        [ -n "$name" ] || continue
        commit="$(commit_of "$name")"
        if [ "$commit" != "$head" ] && git merge-base --is-ancestor "$commit" HEAD 2>/dev/null; then tag="$name"; fi
    done < docs/releases.tsv
    if [ -z "$tag" ]; then echo none; exit 0; fi
else
    tag="$want"
fi
commit="$(commit_of "$tag")"
[ -n "$commit" ] || { echo "build-release: no release $tag (no tag, and not in docs/releases.tsv)" >&2; exit 1; }
git cat-file -e "$commit^{commit}" 2>/dev/null || { echo "build-release: $tag's commit $commit is not in this clone (a shallow clone? git fetch --unshallow)" >&2; exit 1; }

place="$PWD/.build-releases/$tag"
source="$place/source"
kept="$place/pulse-peer"
if [ "$(cat "$place/commit" 2>/dev/null || true)" = "$commit" ] && [ -x "$kept" ]; then
    "$kept" --version >&2
    echo "$kept"
    exit 0
fi
if [ "$(cat "$place/commit" 2>/dev/null || true)" != "$commit" ]; then
    rm -rf "$source" "$place/commit"
    mkdir -p "$source"
    git archive "$commit" | tar -x -C "$source"
    short="$(git rev-parse --short=12 "$commit")"
    sed -i "s/^    static let commit: String? = nil$/    static let commit: String? = \"$short\"/" "$source/Sources/pulse-peer/BuildStamp.swift"
    echo "$commit" > "$place/commit.pending"
fi
scratch="${PULSE_RELEASE_SCRATCH:-$place/build}"
rm -f "$kept"
swift build --package-path "$source" --scratch-path "$scratch" --product pulse-peer >&2
binary="$(swift build --package-path "$source" --scratch-path "$scratch" --product pulse-peer --show-bin-path)/pulse-peer"
# Kept apart: a shared scratch directory's next build (the tree's own) replaces its binary.
cp "$binary" "$kept.partial" && mv "$kept.partial" "$kept"
[ -f "$place/commit.pending" ] && mv "$place/commit.pending" "$place/commit"
"$kept" --version >&2
echo "$kept"
