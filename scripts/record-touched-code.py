#!/usr/bin/env python3
"""The functions an agent runs natively at rest, for scripts/record-startup-order.sh: usage
record-touched-code.py BIN OUT.json, as root. Runs Tests/memory_check.py's scenario (the agent
idle with no peer; idle after a session with a peer) with each measured agent on a copy of BIN
of its own, dropped from the page cache, and the disk's read-ahead off while it runs, so that
a page of its code is resident only if the agent itself touched it (with read-ahead on, a fault
reads megabytes around it and maps the cached 64 kB around it: docs/PERFORMANCE.md). Writes
{"idle, no peer": [[names]], "idle after a session with a peer": [[names]]}: for each touched
page, the functions overlapping it (BIN's symbol table: one of them ran, maybe not all).

Why beside callgrind: under valgrind the program sees valgrind's CPU, so BoringSSL takes other
code paths (its choice by CPU features), and timing moves which of an async function's parts
run; a function only the native run touches was left out of the list and cost a 64 kB island.
The read-ahead is the block device's (/sys/dev/block/MAJ:MIN/…/queue/read_ahead_kb), restored
after; the kernel's fault-around is not ours to change and needs no change: it maps only pages
already cached."""
import bisect
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests"))
import memory_check  # noqa: E402  (the scenario measured is the one recorded)


def read_ahead_file(path):
    """The queue's read_ahead_kb of the disk holding path (a partition's is its disk's)."""
    dev = os.stat(path).st_dev
    node = os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    for candidate in (node, os.path.dirname(node)):
        knob = os.path.join(candidate, "queue", "read_ahead_kb")
        if os.path.exists(knob):
            return knob
    raise SystemExit(f"record-touched-code: no read_ahead_kb for the disk of {path} ({node})")


def code_symbols(binary):
    """(start, end, name) of BIN's functions, sorted, and the code segment's vaddr − offset."""
    headers = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    delta = None
    for line in headers.splitlines():
        fields = line.split()
        if fields[:1] == ["LOAD"] and "E" in fields[6:-1]:
            delta = int(fields[2], 16) - int(fields[1], 16)
    if delta is None:
        raise SystemExit(f"record-touched-code: no executable segment in {binary}")
    table = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    symbols = []
    for line in table.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in "tTwW":
            start = int(fields[0], 16)
            symbols.append((start, start + max(int(fields[1], 16), 1), fields[3]))
    symbols.sort()
    return symbols, delta


def touched_offsets(pid):
    """File offsets of the resident pages of the process's executable code mapping."""
    exe = os.readlink(f"/proc/{pid}/exe")
    offsets = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for line in maps:
            fields = line.split()
            if len(fields) < 6 or fields[5] != exe or fields[1] != "r-xp":
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            pagemap.seek(start // 4096 * 8)
            entries = pagemap.read((end - start) // 4096 * 8)
            for page in range((end - start) // 4096):
                if struct.unpack_from("<Q", entries, page * 8)[0] >> 63:  # present
                    offsets.append(int(fields[2], 16) + page * 4096)
    return offsets


def main():
    binary, out = sys.argv[1], sys.argv[2]
    symbols, delta = code_symbols(binary)
    starts = [start for start, _, _ in symbols]
    scratch = tempfile.mkdtemp(prefix="pulse-touched-")
    copies = []

    def own_copy(home):
        """A copy no other process maps, written out and dropped from the page cache."""
        path = os.path.join(scratch, f"pulse-peer-{len(copies)}")
        shutil.copy(binary, path)
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        copies.append(path)
        return path

    found = {}

    def measure(figure, agent):
        agent.at_rest()
        pages = []
        for offset in touched_offsets(agent.process.pid):
            low, high = offset + delta, offset + delta + 4096
            index = max(bisect.bisect_right(starts, low) - 1, 0)
            names = []
            while index < len(symbols) and symbols[index][0] < high:
                if symbols[index][1] > low:
                    names.append(symbols[index][2])
                index += 1
            pages.append(names)
        found[figure] = pages
        print(f"record-touched-code: {figure}: {len(pages)} pages of code touched", file=sys.stderr)

    knob = read_ahead_file(scratch)
    before = open(knob).read().strip()
    try:
        with open(knob, "w") as f:
            f.write("0")
        memory_check.scenario(binary, measure, agent_binary=own_copy)
    finally:
        with open(knob, "w") as f:
            f.write(before)
        shutil.rmtree(scratch, ignore_errors=True)
    with open(out, "w") as f:
        json.dump(found, f)


if __name__ == "__main__":
    main()
