"""The agent's memory at rest, as a check (issue 54; docs/PERFORMANCE.md, "Idle RSS"): a
release agent idle with no peer, and idle after a session with a peer, each under LIMIT.
Memory repeats from run to run where time does not, so this is a test and the timings stay in
the bench. Usage: memory_check.py BIN [LIMIT_MB] (BIN: a release build made as the package
is, scripts/release-build.sh; the package test runs it on the installed binary). Prints one
line per figure; exits 1 when a figure is over the limit.

What is measured is what `pulse-bench` measures (its idle and catch-up figures): the agent as
`run --port 0 --listen 127.0.0.1 --no-mdns`, its VmRSS once start-up is over — read once it
has not moved by more than 64 kB for 5 s (readings every half second, under a deadline).

Each measured agent starts with its binary out of the page cache, as after a reboot (what no
running process maps is dropped: posix_fadvise DONTNEED): a binary just written (a build, a
package installed) is cached in large folios, and a fault maps a whole cached folio, so the
same agent measured up to 1.4 MB more, or less, by how its file was last written or read
(docs/PERFORMANCE.md, "Idle RSS depends on the page cache").

`scenario` is also what scripts/record-touched-code.py records the start-up order from: a
change to the states measured here changes what the list holds (re-record it, decision 0007)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def evict(binary):
    """Drops the binary's pages no process maps from the page cache."""
    fd = os.open(binary, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


class Agent:
    def __init__(self, binary, home, *args):
        self.process = subprocess.Popen([binary, "run", "--home", home, "--port", "0", "--listen", "127.0.0.1", "--no-mdns",
                                         "--log-level", "error", *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"memory check: the agent of {home} did not start")
        self.port = json.loads(line)["port"]

    def rss_mb(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024

    def at_rest(self, deadline=60):
        """VmRSS once it has stayed within 64 kB for 5 s (11 readings 0.5 s apart): start-up over."""
        readings = []
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            readings = (readings + [self.rss_mb()])[-11:]
            if len(readings) == 11 and max(readings) - min(readings) <= 0.0625:
                return max(readings)
            time.sleep(0.5)  # the next reading, until the deadline
        raise SystemExit(f"memory check: the agent's memory never settled in {deadline} s: {readings}")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def scenario(binary, measure, agent_binary=None):
    """The two agents at rest that the check measures, in turn: measure(figure, agent) is called
    for "idle, no peer" (a household of one computer) and for "idle after a session with a peer"
    (B paired with A, caught up, restarted, in sync again), each agent just settled. The measured
    agents run agent_binary(home) when given (the start-up order's recorder gives each a copy
    of its own), else BINARY evicted before each; A and the CLI run BINARY."""
    scratch = tempfile.mkdtemp(prefix="pulse-memory-")
    agents = []

    def cli(*args, home):
        result = subprocess.run([binary, *args, "--home", home], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise SystemExit(f"memory check: {' '.join(args)} exited {result.returncode}: {result.stderr.strip()[-500:]}")
        return result.stdout

    def started(home, *args, measured=False):
        if measured and agent_binary:
            agent = Agent(agent_binary(home), home, *args)
        else:
            if measured:
                evict(binary)
            agent = Agent(binary, home, *args)
        agents.append(agent)
        return agent

    def stopped(agent):
        agent.stop()
        agents.remove(agent)

    try:
        a, b, alone = (os.path.join(scratch, name) for name in ("a", "b", "alone"))
        # Idle, no peer: a household of one computer.
        cli("init", home=alone)
        agent = started(alone, measured=True)
        cli("status", "--json", "--wait", "synced", "--peers", "0", "--timeout", "30", home=alone)
        measure("idle, no peer", agent)
        stopped(agent)
        # Idle after a session: B paired with A, caught up, restarted, in sync again, then at rest.
        cli("init", home=a)
        cli("shop", "add", "Milk", "Bread", home=a)
        agent_a = started(a)
        code = cli("invite", home=a).strip()
        cli("join", code, "--peer", f"127.0.0.1:{agent_a.port}", home=b)
        agent_b = started(b, "--peer", f"127.0.0.1:{agent_a.port}")
        cli("status", "--json", "--wait", "synced", "--timeout", "60", home=b)
        stopped(agent_b)
        agent_b = started(b, "--peer", f"127.0.0.1:{agent_a.port}", measured=True)
        cli("status", "--json", "--wait", "synced", "--timeout", "60", home=b)
        measure("idle after a session with a peer", agent_b)
    finally:
        for agent in agents:
            agent.process.kill()
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    binary = sys.argv[1]
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    figures = []
    scenario(binary, lambda figure, agent: figures.append((figure, agent.at_rest())))
    failed = 0
    for figure, mb in figures:
        good = mb <= limit
        failed += not good
        print(f"{'ok' if good else 'FAILED'} the agent's RSS {figure}: {mb:.1f} MB (at most {limit:.0f} MB)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
