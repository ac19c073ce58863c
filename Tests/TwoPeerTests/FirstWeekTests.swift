import Foundation
import Testing

/// A family's first week (issue 52): the faults a real household met, each as the family met
/// it — two computers, their agents, the CLI and the local API as a page calls it.
@Suite(.serialized) struct FirstWeekTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    func pair() throws -> (Home, Home, AgentProcess, AgentProcess) { try scratch.twoAgents(bFor: "Tom") }

    // MARK: 1. A change that is never sent

    /// Item 1, as reproduced: a repeating task added through the API, then Tasks opened on
    /// both computers (each listing makes today's instance: a write inside a listing).
    @Test func aRepeatingTaskMadeByOpeningTasksReachesTheOtherComputerAtOnce() throws {
        let (a, b, agentA, agentB) = try pair()
        defer {
            agentB.stop()
            agentA.stop()
        }
        try a.api("recurring.add", ["title": "Feed the cat", "schedule": "daily"])
        try b.waitUntil("synced", timeout: 10)
        try b.api("task.list")
        try a.api("task.list")
        try a.waitUntil("synced", timeout: 10)
        try b.waitUntil("synced", timeout: 10)
        #expect(try a.export() == b.export())
        let titles = (try a.api("task.list") as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        #expect(titles == ["Feed the cat"], "one instance for the household: \(titles)")
    }

    /// Item 1's randomized check: after any write of any kind — the API's, the CLI's, the
    /// agent's own (today's repeating task made by a listing; the rewind of a computer put
    /// back from its backup, which issues its changes again under a new id) — both computers
    /// report in sync within a second, and the live feed said so (what the page's header and
    /// its Computers card both reload on). A computer put back is restarted: its second
    /// starts when its agent is back in session with the other. (The migrations an upgrade
    /// runs at start: `PreviousReleaseTests`, an upgraded computer in sync within a second.)
    @Test func afterAnyWriteOfAnyKindBothComputersAreInSyncWithinASecond() throws {
        let (a, b, agentA, firstAgentB) = try pair()
        var agentB = firstAgentB
        defer {
            agentB.stop()
            agentA.stop()
        }
        let backup = scratch.home("b-backup.sqlite")
        try b.run(["backup", backup])
        var rewinds = 0
        var rewindTimes: [TimeInterval] = []
        let watchA = try Watcher(a, ["--topic", "sync"])
        var random = SeededGenerator(seed: UInt64(ProcessInfo.processInfo.environment["PULSE_SEED"] ?? "") ?? 52)
        var counter = 0
        typealias Write = (Home) throws -> Void
        let writes: [(String, Write)] = [
            (
                "shop.add",
                { home in
                    counter += 1; try home.api("shop.add", ["names": ["Item \(counter)"]])
                }
            ),
            (
                "shop add (CLI)",
                { home in
                    counter += 1; try home.run(["shop", "add", "Thing \(counter)"])
                }
            ),
            (
                "task.add",
                { home in
                    counter += 1; try home.api("task.add", ["title": "Task \(counter)", "force": true])
                }
            ),
            (
                "recurring.add + task.list",
                { home in
                    counter += 1
                    try home.api("recurring.add", ["title": "Chore \(counter)", "schedule": "daily"])
                    try home.api("task.list")
                }
            ),
            ("task.list on the other", { home in try home.api("task.list") }),
            (
                "backlog.category.add",
                { home in
                    counter += 1; try home.api("backlog.category.add", ["title": "Area \(counter)"])
                }
            ),
            ("settings.set", { home in try home.api("settings.set", ["key": "appearance", "value": Bool.random() ? "dark" : "light"]) }),
            (
                "member.add",
                { home in
                    counter += 1; try home.api("member.add", ["name": "Guest \(counter)"])
                }
            ),
            ("language.set", { home in try home.api("language.set", ["language": ["pl", "de", "en"].randomElement()!, "scope": "member"]) }),
            ("backup", { home in if home.path == b.path { try b.run(["backup", backup, "--force"]) } }),
            (
                "B writes, then is put back from its backup (a rewind)",
                { _ in
                    counter += 1
                    try b.run(["shop", "add", "Before the disk died \(counter)"])
                    _ = try b.waitUntil("synced", timeout: 10)
                    #expect(agentB.stop() == 0)
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: b.path + "/household.sqlite" + suffix) }
                    // Put back by `restore` (which continues as a new replica itself) or as a
                    // file system's snapshot would (the agent finds it went back in time).
                    let asSnapshot = random.next() % 2 == 0
                    if asSnapshot {
                        try FileManager.default.copyItem(atPath: backup, toPath: b.path + "/household.sqlite")
                    } else {
                        try b.run(["restore", backup])
                    }
                    agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
                    // Its first session finds it went back in time, ends, and the next sends
                    // what it issued again: in sync within 3 s of its start (B dials at once; 0.04–0.82 s measured).
                    let started = Date()
                    _ = try b.waitUntil("synced", timeout: 10)
                    #expect(Date().timeIntervalSince(started) < 3, "B put back was in sync only after \(Date().timeIntervalSince(started)) s")
                    rewindTimes.append(Date().timeIntervalSince(started))
                    if asSnapshot {
                        let warnings = (try b.status()["machine"] as? [String: Any])?["warnings"] as? [String] ?? []
                        #expect(warnings.contains { $0.contains("put back to an older state") }, "no rewind said: \(warnings)")
                    }
                    rewinds += 1
                }
            ),
        ]
        // Every kind once, in a random order, then 24 at random.
        let order = Array(writes.indices).shuffled(using: &random) + (0..<24).map { _ in Int(random.next() % UInt64(writes.count)) }
        for (step, index) in order.enumerated() {
            let (name, write) = writes[index]
            let home = random.next() % 2 == 0 ? a : b
            try write(home)
            for side in [a, b] {
                let reached = try side.waitUntil("synced", timeout: 1, orFail: false)
                let peers = reached["peers"] as? [[String: Any]] ?? []
                #expect(
                    peers.allSatisfy { $0["inSync"] as? Bool == true },
                    "step \(step) (\(name) on \(home.path.suffix(1))): \(side.path.suffix(1)) not in sync within 1 s: \(peers)")
            }
        }
        #expect(try a.export() == b.export())
        // Every addition B made before it was put back lives on (reissued or come back from A).
        let names = Set(try a.shoppingNames())
        #expect((1...counter).filter { names.contains("Before the disk died \($0)") }.count == rewinds, "\(names)")
        #expect(rewinds > 0)
        print("rewinds: \(rewinds), in sync after \(rewindTimes.map { String(format: "%.2f s", $0) })")
        // The feed told of the state changing both ways, and ends in sync.
        #expect(watchA.waitFor { $0["type"] as? String == "peer.sync" && $0["title"] as? String == "syncing" })
        #expect(
            eventually(timeout: 5) {
                watchA.events.last { $0["type"] as? String == "peer.sync" }?["title"] as? String == "synced"
            }, "\(watchA.events.suffix(4))")
        watchA.stop()
    }
}

extension FirstWeekTests {
    // MARK: 2. Who uses a joined computer

    /// Item 2: joining says who uses the computer; without it, the computer is nobody's (it
    /// used to become the inviter's, so Tom's additions were Anna's and Anna was never told).
    @Test func aJoinedComputerBelongsToWhoeverJoiningSaidUsesIt() throws {
        let a = Home(path: scratch.home("a")), b = Home(path: scratch.home("b")), c = Home(path: scratch.home("c"))
        try a.run(["init", "--household", "Nowaks", "--member", "Anna", "--member", "Tomasz"])
        let agentA = try AgentProcess(home: a.path)
        defer { agentA.stop() }
        // Tomasz's computer: his name said when joining, in any case.
        var code = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let joined = try b.run(["join", code, "--peer", agentA.address, "--member", "tomasz", "--name", "Study PC"]).stdout
        #expect(joined.contains("tomasz"), "\(joined)")
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        defer { agentB.stop() }
        try b.waitUntil("synced")
        #expect(eventually(timeout: 10) { (try? b.run(["whoami"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == "Tomasz" })
        // What he adds there is his, and Anna's computer hears of it as his.
        let watchA = try Watcher(a, ["--topic", "shopping"])
        try b.run(["shop", "add", "Coffee"])
        #expect(watchA.waitFor { $0["title"] as? String == "Coffee" && $0["authorName"] as? String == "Tomasz" }, "\(watchA.events)")
        watchA.stop()
        // A third computer joined with no name: nobody's, said so — not Anna's.
        code = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let unnamed = try c.run(["join", code, "--peer", agentA.address]).stdout
        #expect(unnamed.contains("whoami --set"), "\(unnamed)")
        #expect(try c.run(["whoami"]).stdout.contains("no member yet"))
        // A name the household lacks becomes a member once the data arrived.
        let d = Home(path: scratch.home("d"))
        code = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try d.run(["join", code, "--peer", agentA.address, "--member", "Mia"])
        let agentD = try AgentProcess(home: d.path, ["--peer", agentA.address])
        defer { agentD.stop() }
        try d.waitUntil("synced")
        #expect(eventually(timeout: 10) { (try? d.run(["whoami"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == "Mia" })
        #expect(eventually(timeout: 10) { (try? a.run(["member", "list"]).stdout.contains("Mia")) == true })
        // A name that could never be a member is refused before the code is spent.
        code = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let refused = try Home(path: scratch.home("e")).run(["join", code, "--peer", agentA.address, "--member", "me"], orFail: false)
        #expect(refused.status != 0 && !FileManager.default.fileExists(atPath: scratch.home("e") + "/household.sqlite"), "\(refused.stderr)")
    }
}

extension FirstWeekTests {
    // MARK: 5 and 6. Notifications: who did it, and only what is news

    func hooked(_ home: Home, _ args: [String] = []) throws -> AgentProcess {
        try AgentProcess(
            home: home.path, ["--on-notify", "cat >> '\(home.path)-notifications.jsonl'"] + args,
            wrapper: ["/usr/bin/env", "-u", "DBUS_SESSION_BUS_ADDRESS", "-u", "XDG_RUNTIME_DIR"])
    }

    /// Anna's A and Tom's B (joined for Tom), each agent with a notification hook, in step.
    func annasAndTomsComputers(_ a: Home, _ b: Home) throws -> (AgentProcess, AgentProcess) {
        try a.run(["init", "--household", "Nowaks", "--member", "Anna", "--member", "Tom"])
        let pairing = try AgentProcess(home: a.path)
        try b.pair(with: a, at: pairing, member: "Tom")
        _ = pairing.stop()
        let agentA = try hooked(a)
        let agentB = try hooked(b, ["--peer", agentA.address])
        try b.waitUntil("synced")
        return (agentA, agentB)
    }

    func notifications(_ home: Home) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: home.path + "-notifications.jsonl", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Items 5 and 6: a kid's redemption names the kid; an undone clear is not "new items";
    /// a computer that joins later is not told of what happened before it joined.
    @Test func notificationsNameTheKidAndTellOnlyWhatIsNewToTheReader() throws {
        let a = Home(path: scratch.home("a")), b = Home(path: scratch.home("b")), c = Home(path: scratch.home("c"))
        let (agentA, agentB) = try annasAndTomsComputers(a, b)
        defer {
            agentB.stop()
            agentA.stop()
        }

        // Tom's own items (no news to him); Anna clears the list and undoes it: the same items
        // back, still no news (they were told as "new items added"); then Anna adds Pears.
        try b.run(["shop", "add", "Apples", "Bread"])
        try a.waitUntil("synced")
        try a.run(["shop", "clear"])
        try a.run(["shop", "undo"])
        try a.run(["shop", "add", "Pears"])
        #expect(eventually(timeout: 20) { !notifications(b).isEmpty }, "\(notifications(b))")
        #expect(notifications(b).map { $0["summary"] as? String ?? "" } == ["“Pears” added to Shopping List"], "\(notifications(b))")

        // Kuba redeems a reward on his mother's computer: Tom hears it was Kuba.
        try a.run(["kids", "pin", "set", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "add", "Kuba", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "select", "reward_001", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "adjust", "Kuba", "--add", "50", "--reason", "Birthday", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "redeem", "Kuba", "reward_001"])
        #expect(
            eventually(timeout: 20) { notifications(b).contains { ($0["body"] as? String ?? "").contains("Kuba") } },
            "\(notifications(b))")
        let redemption = notifications(b).first { $0["group"] as? String == "kids" || ($0["summary"] as? String ?? "").hasPrefix("Redeemed") }
        #expect((redemption?["body"] as? String ?? "").contains("Kuba") && !(redemption?["body"] as? String ?? "").contains("Anna"), "\(notifications(b))")

        // A computer joined now catches up on all of it, and is told of none of it.
        let code = try a.run(["invite", "--member", "Anna"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try c.run(["join", code, "--peer", agentA.address])
        let agentC = try hooked(c, ["--peer", agentA.address])
        defer { agentC.stop() }
        try c.waitUntil("synced")
        try b.run(["shop", "add", "Plums"])
        #expect(eventually(timeout: 20) { !notifications(c).isEmpty }, "\(notifications(c))")
        #expect(notifications(c).map { $0["summary"] as? String ?? "" } == ["“Plums” added to Shopping List"], "\(notifications(c))")
    }
}

extension FirstWeekTests {
    // MARK: 19. The holder named every time

    /// Item 19: the loser of a start race read the lock file before the winner had written
    /// its PID, and said "another process". The kernel's lock table names it from the start:
    /// here a holder that never writes the file at all.
    @Test func aRefusedAgentNamesTheHomesHolderEvenBeforeItWroteItsPID() throws {
        let a = Home(path: scratch.home("a"))
        try a.run(["init"])
        let lock = a.path + "/agent.lock"
        let holder = try SpawnedProcess([
            "python3", "-c",
            "import fcntl, os, signal, sys\nfd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)\n"
                + "fcntl.flock(fd, fcntl.LOCK_EX)\nsignal.pause()", // held until terminated
            lock,
        ])
        defer { holder.terminate() }
        #expect(
            eventually(timeout: 10) {
                (try? String(contentsOfFile: "/proc/locks", encoding: .utf8))?.split(separator: "\n")
                    .contains { $0.contains("FLOCK") && $0.split(separator: " ").contains(Substring(String(holder.pid))) } == true
            })
        let refused = try a.run(["run", "--port", "0", "--no-mdns", "--web", "off"], orFail: false)
        #expect(refused.status != 0 && refused.stderr.contains("process \(holder.pid)"), "\(refused.stderr)")
    }
}

extension FirstWeekTests {
    // MARK: 17. The welcome takes up a household made meanwhile

    /// Item 17: `run` on an empty home (here with the page off: said on stderr), then `init`
    /// in a terminal: the agent takes the household up at once (it answered "no household"
    /// until SIGTERM).
    @Test func aWelcomingAgentTakesUpAHouseholdMadeInATerminalAtOnce() throws {
        let a = Home(path: scratch.home("a"))
        let made = DispatchSemaphore(value: 0)
        let home = a
        DispatchQueue.global().async {
            // Once the welcome answers on its socket, the household is made in a terminal.
            _ = eventually(timeout: 30) { FileManager.default.fileExists(atPath: home.path + "/control.sock") }
            _ = try? home.run(["init"])
            made.signal()
        }
        let agent = try AgentProcess(home: a.path, ["--web", "off"], timeout: 30)
        defer { agent.stop() }
        #expect(made.wait(timeout: .now() + 30) == .success)
        #expect(agent.log.contains("--web off") && agent.log.contains("pulse-peer init"), "\(agent.log)")
        try a.run(["shop", "add", "Milk"])
        #expect(try a.status()["machine"] != nil)
    }
}

extension FirstWeekTests {
    // MARK: 4. A PIN changed behind the parents' backs is told to every adult

    /// Item 4, as a child with two computers did it: a reset asked on one, confirmed on the
    /// other, a PIN of their own, then +50. Every other computer is notified, every computer
    /// shows it until an adult confirms it with the PIN, and the history names the computer.
    @Test func aPINResetAndChangedByAChildIsToldToEveryAdultUntilOneConfirmsIt() throws {
        let a = Home(path: scratch.home("a")), b = Home(path: scratch.home("b"))
        let (agentA, agentB) = try annasAndTomsComputers(a, b)
        defer {
            agentB.stop()
            agentA.stop()
        }
        // The parents' first PIN, set on A: no news on A; Tom's B is told.
        try a.run(["kids", "pin", "set", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "add", "Kuba", "--pin-stdin"], stdin: "1234\n")
        #expect(eventually(timeout: 20) { notifications(b).contains { $0["group"] as? String == "pin" } }, "\(notifications(b))")
        #expect(try (a.api("kids.pin.get") as? [String: Any])?["change"] == nil, "the first PIN, made here: no news here")
        // Tom confirms it was a parent, with the PIN.
        #expect(throws: (any Error).self) { try b.api("kids.pin.acknowledge", ["pin": "0000"]) }
        try b.waitUntil("synced")
        try b.api("kids.pin.acknowledge", ["pin": "1234"])
        #expect(try (b.api("kids.pin.get") as? [String: Any])?["change"] == nil)

        // The child: a reset asked on B, confirmed on A, a PIN of their own, then +50.
        let asked = try b.run(["kids", "pin", "reset"]).stdout
        let code = try #require(asked.split(separator: "\n").first?.split(separator: " ").last.map(String.init))
        try a.waitUntil("synced")
        try a.run(["kids", "pin", "reset", "--confirm", code])
        try a.run(["kids", "pin", "set", "--pin-stdin"], stdin: "9999\n")
        try a.run(["kids", "adjust", "Kuba", "--add", "50", "--reason", "Because", "--pin-stdin"], stdin: "9999\n")
        try b.waitUntil("synced")
        let here = try #require(
            (try JSONSerialization.jsonObject(with: Data(a.run(["devices", "--json"]).stdout.utf8)) as? [[String: Any]])?
                .first { $0["thisMachine"] as? Bool == true }?["name"] as? String)
        for home in [a, b] {
            let change = try #require((try home.api("kids.pin.get") as? [String: Any])?["change"] as? [String: Any], "\(home.path)")
            #expect(change["kind"] as? String == "changed" && change["machine"] as? String == here, "\(change)")
        }
        // Notified on B: the reset asked there is B's own doing; A's reset and new PIN are news.
        #expect(
            eventually(timeout: 20) { notifications(b).filter { $0["group"] as? String == "pin" }.count >= 2 }, "\(notifications(b))")
        #expect(
            eventually(timeout: 20) { notifications(a).contains { ($0["summary"] as? String ?? "").contains("reset") } },
            "A hears of the reset asked on B: \(notifications(a))")
        // The +50 names the computer it came from.
        let history = try #require(try b.api("kids.history.list", ["kid": "Kuba"]) as? [[String: Any]])
        #expect(history.contains { $0["peanuts"] as? Int == 50 && $0["machine"] as? String == here }, "\(history)")
        // Shown until an adult confirms it with the PIN as it is now.
        try b.api("kids.pin.acknowledge", ["pin": "9999"])
        #expect(try (b.api("kids.pin.get") as? [String: Any])?["change"] == nil)
        #expect(try (a.api("kids.pin.get") as? [String: Any])?["change"] != nil, "each computer's adult confirms it there")
        // The same from a terminal: said, then confirmed with the PIN.
        let said = try a.run(["kids", "pin"]).stdout
        #expect(said.contains("The PIN was changed on \(here)") && said.contains("kids pin ok"), "\(said)")
        #expect(try a.run(["kids", "pin", "ok", "--pin-stdin"], stdin: "1234\n", orFail: false).status != 0, "the old PIN confirms nothing")
        try a.run(["kids", "pin", "ok", "--pin-stdin"], stdin: "9999\n")
        #expect(try (a.api("kids.pin.get") as? [String: Any])?["change"] == nil)
        #expect(!(try a.run(["kids", "pin"]).stdout.contains("was changed")))
    }
}

extension FirstWeekTests {
    // MARK: 9. One thing once on the list

    /// Item 9: `shop add Milk` while Milk is on the list made a second Milk ("milk", "MILK"
    /// too). Decided: a name on the list (any case) adds nothing, and says so.
    @Test func aNameAlreadyOnTheListIsSaidAndNotAddedTwice() throws {
        let a = Home(path: scratch.home("a"))
        try a.run(["init"])
        try a.run(["shop", "add", "Milk"])
        let again = try a.run(["shop", "add", "milk", "MILK", "Bread"]).stdout
        #expect(again.contains("Already on the list, not added twice: Milk") && again.contains("Added Bread"), "\(again)")
        #expect(try a.shoppingNames() == ["Milk", "Bread"])
    }
}

extension FirstWeekTests {
    // MARK: 18. Advice that works after a restore

    /// Item 18: a computer whose database was lost (its key kept) restored from a backup is
    /// back as itself — told so, nothing to pair, nobody "lost", its name kept — and syncs.
    @Test func aComputerRestoredIntoItsOwnHomeIsBackAsItselfAndToldSo() throws {
        let a = Home(path: scratch.home("a")), b = Home(path: scratch.home("b"))
        try a.run(["init"])
        let agentA = try AgentProcess(home: a.path)
        defer { agentA.stop() }
        let code = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try b.run(["join", code, "--peer", agentA.address, "--name", "Study PC", "--member", "Tom"])
        var agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        try a.run(["shop", "add", "Milk"])
        try b.waitUntil("synced")
        let file = scratch.home("b-backup.sqlite")
        try b.run(["backup", file])
        agentB.stop()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: b.path + "/household.sqlite" + suffix) }
        let restored = try b.run(["restore", file]).stdout
        #expect(restored.contains("back in the household as itself (Study PC)") && !restored.contains("lost computers"), "\(restored)")
        agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        defer { agentB.stop() }
        try b.waitUntil("synced")
        try a.run(["shop", "add", "Eggs"])
        try b.waitUntil("synced")
        #expect(eventually(timeout: 10) { (try? b.shoppingNames()) == ["Milk", "Eggs"] })
        let names = (try JSONSerialization.jsonObject(with: Data(a.run(["devices", "--json"]).stdout.utf8)) as? [[String: Any]] ?? [])
            .compactMap { $0["name"] as? String }
        #expect(names.filter { $0 == "Study PC" }.count == 1 && names.count == 2, "\(names)")
    }
}

/// SplitMix64: a small, seedable, reproducible generator.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
