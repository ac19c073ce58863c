#!/usr/bin/env bash
# The Debian package (issue 43): `scripts/package-deb.sh [OUT_DIR]` → OUT_DIR/pulse-peer_VERSION_amd64.deb
# (default OUT_DIR: .build/deb), from this checkout's committed tree as HEAD has it.
#
# The release build (static Swift standard library: no Swift on the family's computer) of a
# clean copy of HEAD, with the commit written into its BuildStamp.swift; then the package's tree:
# the binary, the systemd user unit, "House Pulse" in the applications menu with its icons (SVG
# and PNG sizes, hicolor), shell completions and a man page made by the binary itself, and the
# copyright and changelog; maintainer scripts that restart (upgrade) or stop (removal) the users'
# agents. Depends: from the libraries the binary names (dpkg -S). lintian checks
# it: no errors, or this fails. Needs: apt install help2man librsvg2-bin lintian binutils.
#
# PULSE_DEB_VERSION overrides the version (an upgrade test builds an "older" package from the
# same tree); PULSE_DEB_BUILD reuses an already built checkout directory (its .build kept).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
out="$(mkdir -p "${1:-.build/deb}" && cd "${1:-.build/deb}" && pwd)"
export PATH="/opt/swift/usr/bin:$PATH"

for tool in git help2man rsvg-convert dpkg-deb readelf strip lintian; do
    command -v "$tool" >/dev/null || { echo "package-deb: $tool is missing (apt install help2man librsvg2-bin lintian binutils)" >&2; exit 1; }
done
commit="$(git rev-parse --short=12 HEAD)"
version="${PULSE_DEB_VERSION:-$(sed -n 's/^ *static let version = "\(.*\)"$/\1/p' Sources/pulse-peer/BuildStamp.swift)}"
[ -n "$version" ] || { echo "package-deb: no version in Sources/pulse-peer/BuildStamp.swift" >&2; exit 1; }

# A clean copy of HEAD (what was committed, nothing else), stamped with its commit.
build="${PULSE_DEB_BUILD:-$out/checkout}"
if [ ! -d "$build/.git" ]; then git clone -q "$repo" "$build"; fi
git -C "$build" fetch -q "$repo" HEAD && git -C "$build" checkout -q --force FETCH_HEAD && git -C "$build" clean -qfdx -e .build
sed -i "s/^    static let commit: String? = nil$/    static let commit: String? = \"$commit\"/" "$build/Sources/pulse-peer/BuildStamp.swift"
sed -i "s/^    static let version = \".*\"$/    static let version = \"$version\"/" "$build/Sources/pulse-peer/BuildStamp.swift"
grep -q "\"$commit\"" "$build/Sources/pulse-peer/BuildStamp.swift" || { echo "package-deb: the commit was not stamped" >&2; exit 1; }
(cd "$build" && bash scripts/release-build.sh pulse-peer >&2)
binary="$(cd "$build" && swift build -c release --static-swift-stdlib --show-bin-path)/pulse-peer"
# The dependency set it was built with is the one recorded (docs/dependencies.tsv: Package.swift
# pins exact versions, and theirs must not drift either), or there is no package.
resolved="$(python3 -c 'import json, sys
for pin in json.load(open(sys.argv[1]))["pins"]: print(pin["identity"] + "\t" + pin["state"].get("version", "no version: " + str(pin["state"])))' \
    "$build/Package.resolved" | sort)"
if [ "$resolved" != "$(sort "$build/docs/dependencies.tsv")" ]; then
    echo "package-deb: the build resolved another dependency set than docs/dependencies.tsv (recorded < > resolved):" >&2
    diff <(sort "$build/docs/dependencies.tsv") <(echo "$resolved") >&2 || true
    exit 1
fi

# The package's tree.
name="pulse-peer_${version}_amd64"
root="$out/$name"
rm -rf "$root"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/lib/systemd/user" "$root/usr/share/applications" \
    "$root/usr/share/icons/hicolor/scalable/apps" "$root/usr/share/bash-completion/completions" \
    "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d" "$root/usr/share/man/man1" \
    "$root/usr/share/doc/pulse-peer"
install -m 0755 "$binary" "$root/usr/bin/pulse-peer"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/pulse-peer"

# The agent at every login of a user who opened House Pulse once (the launcher enables it): the
# unit the binary itself writes for the default home.
"$root/usr/bin/pulse-peer" service unit --executable /usr/bin/pulse-peer > "$root/usr/lib/systemd/user/pulse-peer.service"
chmod 0644 "$root/usr/lib/systemd/user/pulse-peer.service"

cat > "$root/usr/share/applications/house-pulse.desktop" <<'DESKTOP'
[Desktop Entry]
Type=Application
Name=House Pulse
GenericName=Household organiser
Comment=The family's shopping list, tasks and kids' ledger, kept in step between your computers
Comment[pl]=Lista zakupów, zadania i konto dzieci rodziny, zsynchronizowane między komputerami
Comment[de]=Einkaufsliste, Aufgaben und Kinderkonto der Familie, abgeglichen zwischen euren Computern
Comment[nl]=Boodschappenlijst, taken en kinderrekening van het gezin, gelijk gehouden tussen jullie computers
Exec=pulse-peer open --start
Icon=house-pulse
Terminal=false
Categories=Office;ProjectManagement;
Keywords=shopping;tasks;household;family;chores;
StartupNotify=false
DESKTOP
chmod 0644 "$root/usr/share/applications/house-pulse.desktop"

install -m 0644 "$build/Sources/PulseWeb/Resources/icon.svg" "$root/usr/share/icons/hicolor/scalable/apps/house-pulse.svg"
for size in 16 32 48 64 128 256 512; do
    install -d "$root/usr/share/icons/hicolor/${size}x${size}/apps"
    rsvg-convert -w "$size" -h "$size" "$build/Sources/PulseWeb/Resources/icon.svg" -o "$root/usr/share/icons/hicolor/${size}x${size}/apps/house-pulse.png"
    chmod 0644 "$root/usr/share/icons/hicolor/${size}x${size}/apps/house-pulse.png"
done

# Completions and the man page, from the binary itself (swift-argument-parser; help2man).
# (bash-completion sources its files: no #! line.)
"$root/usr/bin/pulse-peer" --generate-completion-script bash | sed '1{/^#!/d}' > "$root/usr/share/bash-completion/completions/pulse-peer"
"$root/usr/bin/pulse-peer" --generate-completion-script zsh > "$root/usr/share/zsh/vendor-completions/_pulse-peer"
"$root/usr/bin/pulse-peer" --generate-completion-script fish > "$root/usr/share/fish/vendor_completions.d/pulse-peer.fish"
chmod 0644 "$root"/usr/share/bash-completion/completions/* "$root"/usr/share/zsh/vendor-completions/* "$root"/usr/share/fish/vendor_completions.d/*
help2man --no-info --version-string="$version" --name="a household kept in step between family computers, with no server" \
    "$root/usr/bin/pulse-peer" | gzip -9n > "$root/usr/share/man/man1/pulse-peer.1.gz"
chmod 0644 "$root/usr/share/man/man1/pulse-peer.1.gz"

# Copyright (machine-readable) and the changelog of this native package.
cat > "$root/usr/share/doc/pulse-peer/copyright" <<'COPYRIGHT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: pulse-peer
Comment: The binary links statically the Swift standard library and the Swift packages
 named in Package.swift (SwiftNIO, swift-nio-ssl with BoringSSL, swift-crypto,
 swift-certificates, swift-asn1, swift-argument-parser, swift-log,
 swift-service-lifecycle, swift-collections, swift-atomics, swift-system), each
 under the Apache License 2.0 (BoringSSL: its own ISC/OpenSSL terms).

Files: *
Copyright: 2026 The House Pulse Peer authors
License: Apache-2.0

License: Apache-2.0
 On Debian systems, the full text of the Apache License version 2.0 can be found
 in the file `/usr/share/common-licenses/Apache-2.0'.
COPYRIGHT
chmod 0644 "$root/usr/share/doc/pulse-peer/copyright"
# What it was built from: the Swift packages, each at its version (checked above).
install -m 0644 "$build/docs/dependencies.tsv" "$root/usr/share/doc/pulse-peer/dependencies.tsv"
{
    echo "pulse-peer ($version) unstable; urgency=medium"
    echo
    echo "  * Built from commit $commit."
    echo
    echo " -- House Pulse Peer maintainers <maintainers@house-pulse.invalid>  $(git -C "$build" log -1 --format=%aD HEAD)"
} | gzip -9n > "$root/usr/share/doc/pulse-peer/changelog.gz"
chmod 0644 "$root/usr/share/doc/pulse-peer/changelog.gz"

# Depends: the package of each shared library the binary itself names (NEEDED; theirs follow).
depends=()
needed="$(readelf -d "$root/usr/bin/pulse-peer" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
while read -r library; do
    # Debian's merged /usr: a library may be registered under /lib rather than /usr/lib.
    package="$({ dpkg -S "$library" 2>/dev/null || dpkg -S "${library#/usr}" 2>/dev/null || true; } | head -n1 | cut -d: -f1)"
    [ -n "$package" ] || { echo "package-deb: no package provides $library" >&2; exit 1; }
    upstream="$(dpkg-query -W -f='${Version}' "$package" | sed 's/-[^-]*$//')"
    depends+=("$package (>= $upstream)")
done < <(ldd "$root/usr/bin/pulse-peer" | awk -v needed="$needed" 'BEGIN { split(needed, n, "\n"); for (i in n) want[n[i]] = 1 }
    /=> \// && ($1 in want) { print $3 }' | xargs -n1 readlink -f | sort -u)
depends_line="$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, | sed 's/,/, /g')"
size="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
cat > "$root/DEBIAN/control" <<CONTROL
Package: pulse-peer
Version: $version
Architecture: amd64
Maintainer: House Pulse Peer maintainers <maintainers@house-pulse.invalid>
Installed-Size: $size
Depends: $depends_line
Recommends: avahi-daemon, dbus-user-session, xdg-utils
Section: utils
Priority: optional
Description: household app kept in step between family computers, no server
 House Pulse keeps a family's shopping list (with a restock pool), daily tasks,
 a backlog of projects and a kids' ledger on every family computer. Each
 computer runs an agent that keeps the whole household in a local database,
 finds the others on the home network (mDNS) and syncs with them over mutually
 authenticated TLS. People use it through a web page served by their own
 agent, on the computer and on paired phones, desktop notifications and a CLI.
CONTROL
# Upgrades and removal: the users' agents restarted on the new binary, or stopped (scripts/deb).
install -d "$root/usr/lib/pulse-peer"
install -m 0755 "$build/scripts/deb/user-agents" "$root/usr/lib/pulse-peer/user-agents"
install -m 0755 "$build/scripts/deb/postinst" "$build/scripts/deb/prerm" "$root/DEBIAN/"
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

deb="$out/$name.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
lintian --fail-on error "$deb" >&2
echo "$deb"
