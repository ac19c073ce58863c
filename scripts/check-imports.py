#!/usr/bin/env python3
"""The layers, checked: a target may import another target of this package only when
Package.swift declares it a *direct* dependency. SwiftPM's own check
(`--explicit-target-dependency-import-check`) lets a target import anything its
dependencies depend on (PulseWeb could import PulseStore through PeerSync); this does not.

Usage: check-imports.py [ROOT]   (reads `swift package dump-package` in ROOT; exits 1 on a
violation, printing each one).
"""
import json
import os
import re
import subprocess
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True,
                                    capture_output=True, text=True).stdout)
ours = {t["name"] for t in package["targets"]}
problems = []
for target in package["targets"]:
    declared = {d["byName"][0] for d in target["dependencies"] if "byName" in d}
    declared |= {d["target"][0] for d in target["dependencies"] if "target" in d}
    folder = target.get("path") or os.path.join("Tests" if target["type"] == "test" else "Sources", target["name"])
    for directory, _, files in os.walk(os.path.join(root, folder)):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as source:
                for number, line in enumerate(source, 1):
                    match = re.match(r"\s*(?:@_exported\s+|@testable\s+)?import\s+(?:\w+\s+)?(\w+)", line)
                    if match and match.group(1) in ours and match.group(1) != target["name"] and match.group(1) not in declared:
                        problems.append(f"{os.path.relpath(path, root)}:{number}: {target['name']} imports {match.group(1)}, "
                                        f"which Package.swift does not declare as its dependency")
for problem in problems:
    print(problem)
if problems:
    print("the layers: a target imports only what it declares (docs/ARCHITECTURE.md, Layers)", file=sys.stderr)
sys.exit(1 if problems else 0)
