import Foundation
import Testing
@testable import PulseStore

/// Faults a family's machines meet besides crashes.
@Suite struct RealWorldFaultsTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    @Test func readersNeverWaitForAWriterAndAWriterSaysWhoHoldsTheLock() throws {
        let home = try scratch.household("a")[0]
        try home.run(["shop", "add", "Milk"])
        try home.run(["recurring", "add", "Water plants", "--daily"])
        let before = try home.export()
        // Another process's long write transaction (here: this test process).
        let holder = try Connection(path: home.path + "/household.sqlite")
        try holder.execute("BEGIN IMMEDIATE")
        for command in [["shop", "list"], ["export", "--json"], ["task"], ["conflicts"], ["backlog"], ["member"]] {
            let started = Date()
            let result = try PulsePeer.run(command + ["--home", home.path])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(Date().timeIntervalSince(started) < 2, "\(command) waited for the writer")
        }
        let refused = try PulsePeer.run(["shop", "add", "Eggs", "--home", home.path])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("is busy: process \(getpid())"), "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was changed"))
        try holder.execute("ROLLBACK")
        #expect(try home.export() == before)
        try home.run(["shop", "add", "Eggs"])
        #expect(try home.shoppingNames() == ["Milk", "Eggs"])
    }

    @Test func aDatabaseDeletedUnderARunningAgentStopsItAndNothingMoreIsSent() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try b.run(["shop", "add", "Milk"])
        let agentA = try AgentProcess(home: a.path)
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try a.waitUntil("synced")
        let exportA = try a.export()
        let appliedByA = try a.appliedChanges()
        try FileManager.default.removeItem(atPath: b.path + "/household.sqlite")
        // The agent is woken by the deletion (inotify) and exits non-zero, saying why.
        agentB.process.waitUntilExit()
        #expect(agentB.process.terminationStatus != 0)
        #expect(agentB.log.contains("was deleted (or moved) while in use"), "\(agentB.log)")
        try a.waitUntil("disconnected")
        #expect(try a.appliedChanges() == appliedByA)
        #expect(try a.export() == exportA)
        // The CLI refuses the home until it is set up again.
        #expect(try PulsePeer.run(["shop", "list", "--home", b.path]).status != 0)
        agentA.stop()
    }

    /// The watch sleeps until the kernel reports a change (no timer): another file renamed
    /// onto the path, or the file cut short, wakes it and the agent stops, saying why.
    @Test(arguments: ["replaced", "truncated"])
    func aDatabaseReplacedOrTruncatedUnderARunningAgentStopsIt(_ fault: String) throws {
        let home = try scratch.household("a")[0]
        try home.run(["shop", "add"], stdin: (1...2000).map { "Thing \($0)" }.joined(separator: "\n"))
        let path = home.path + "/household.sqlite"
        let agent = try AgentProcess(home: home.path)
        if fault == "replaced" {
            let other = home.path + "/other.sqlite"
            try FileManager.default.copyItem(atPath: path, toPath: other)
            #expect(rename(other, path) == 0)
        } else {
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(truncate(path, off_t(size / 2)) == 0)
        }
        agent.process.waitUntilExit()
        #expect(agent.process.terminationStatus != 0)
        let said = fault == "replaced" ? "was replaced by another file while in use" : "got shorter while in use"
        #expect(agent.log.contains(said), "\(agent.log)")
    }

    @Test func aTruncatedDatabaseIsRefusedAtStartAndNeverSyncedFrom() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try b.run(["shop", "add"], stdin: (1...3000).map { "Thing \($0)" }.joined(separator: "\n"))
        let path = b.path + "/household.sqlite"
        do {
            let connection = try Connection(path: path)
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(truncate(path, off_t(size / 3)) == 0)
        let agentA = try AgentProcess(home: a.path)
        let run = try PulsePeer.run(
            [
                "run", "--home", b.path, "--port", "0", "--listen", "127.0.0.1", "--no-mdns",
                "--peer", agentA.address,
            ], timeout: 20)
        #expect(run.status != 0)
        #expect(run.stderr.contains("is damaged") && run.stderr.contains("truncated"), "\(run.stderr)")
        #expect(run.stderr.contains("pulse-peer join"))
        let list = try PulsePeer.run(["shop", "list", "--home", b.path])
        #expect(list.status != 0 && list.stderr.contains("is damaged"))
        #expect(try a.appliedChanges() == 0)
        #expect(try a.shoppingNames().isEmpty)
        agentA.stop()
    }

    /// B's clock is 15 minutes ahead (libfaketime, for B's agent and B's CLI alike). A merges
    /// at once what is stamped up to 14 min 45 s ahead of it (`--max-clock-ahead 885`, so
    /// the test waits seconds, not the 5 minutes the default 10-minute bound would take):
    /// A's change reaches B at once; B's waits, held on A, and merges by the rule when A's
    /// clock is within the bound; both statuses name the clock.
    @Test(.enabled(if: FakeTime.available, "needs libfaketime (apt install faketime)"))
    func aClockFifteenMinutesAheadDelaysOnlyItsOwnChanges() throws {
        let homes = try scratch.household("a", "b")
        let a = homes[0]
        var b = homes[1]
        b.wrapper = FakeTime.offset("+15m")
        let agentA = try AgentProcess(home: a.path, ["--max-clock-ahead", "885"])
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address], wrapper: b.wrapper)
        try a.waitUntil("synced")
        try b.waitUntil("synced")

        try b.run(["shop", "add", "FromSkewedB"])
        try a.run(["shop", "add", "FromA"])
        let written = Date()
        // The healthy machine's change arrives at once, the skewed one's is held on A.
        #expect(try eventually(timeout: 5) { try b.shoppingNames().contains("FromA") })
        #expect(eventually(timeout: 5) { a.warnings().contains { $0.contains("1 change is held") } }, "\(a.warnings())")
        #expect(try a.shoppingNames() == ["FromA"])
        // Measured at HELLO, so within a second of 15 min ("15 min" or "14 min 59 s").
        func namesTheClock(_ warning: String, _ direction: String) -> Bool {
            (warning.contains("clock is 15 min") || warning.contains("clock is 14 min 59 s")) && warning.contains(direction)
        }
        #expect(a.warnings().contains { namesTheClock($0, "ahead of this machine's") }, "\(a.warnings())")
        #expect(b.warnings().contains { namesTheClock($0, "behind this machine's") }, "\(b.warnings())")
        // The same warnings are data (`notices`): a Polish reader reads them in Polish.
        var polish = a
        polish.environment = ["LANG": "pl_PL.UTF-8"]
        let said = try polish.run(["status"]).stdout
        #expect(said.contains("zegar komputera") && said.contains("czeka") && !said.contains("ahead of this machine"), "\(said)")
        // Then by the rule: merged once A's clock is within 14 min 45 s of the stamp (about 15 s
        // after it was made: A sleeps until then), and A's vector covers it — sync reaches `synced`.
        try a.waitUntil("synced", timeout: 60)
        #expect(Date().timeIntervalSince(written) > 10, "merged before the clock caught up")
        #expect(try a.shoppingNames().sorted() == ["FromA", "FromSkewedB"])
        try b.waitUntil("synced", timeout: 30)
        #expect(try a.export() == b.export())
        #expect(!a.warnings().contains { $0.contains("held") })
        #expect(agentB.stop() == 0)
        #expect(agentA.stop() == 0)
        FakeTime.removeLeftovers()
    }

    @Test(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
    func aFullDiskHoldsTheCatchUpWithoutAckAndItResumesWhenSpaceReturns() throws {
        let a = Home(path: scratch.home("a"))
        try a.run(["init"])
        try a.run(["shop", "add"], stdin: (1...4000).map { "Thing number \($0) with a longer name" }.joined(separator: "\n"))
        let disk = try SmallDisk(at: scratch.home("disk"), megabytes: 8)
        let b = Home(path: disk.path + "/home")
        let agentA = try AgentProcess(home: a.path)
        try b.pair(with: a, at: agentA)
        try disk.fill(leaving: 256 * 1024)

        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        // B says the disk is full (polled from its status), and stays up.
        #expect(eventually(timeout: 60) { !b.warnings().isEmpty })
        #expect(b.warnings().first?.contains("is full: free some space") == true, "\(b.warnings())")
        #expect(agentB.process.isRunning)
        // Nothing was acknowledged that B did not store: A still counts what B lacks.
        let seenByA = (try a.waitUntil("synced", timeout: 1, orFail: false)["peers"] as? [[String: Any]])?.first ?? [:]
        #expect(seenByA["inSync"] as? Bool == false)
        #expect((seenByA["peerLacks"] as? Int ?? 0) > 0)
        let stored = try b.shoppingNames().count
        #expect(stored < 4000)

        disk.free()
        try a.waitUntil("synced", timeout: 120)
        try b.waitUntil("synced", timeout: 120)
        #expect(try b.shoppingNames().count == 4000)
        #expect(try a.export() == b.export())
        #expect(b.warnings().isEmpty)
        #expect(agentB.stop() == 0)
        agentA.stop()
    }
}

/// A tmpfs of a few megabytes, mounted for one test (root only), and a file that fills it.
final class SmallDisk {
    let path: String
    private var filler: String { path + "/filler" }

    static let canMount: Bool = {
        guard getuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfs-probe-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard mount("tmpfs", probe, "tmpfs", 0, "size=1m") == 0 else { return false }
        umount(probe)
        return true
    }()

    init(at path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(megabytes)m,mode=0700") == 0 else {
            throw AgentProcess.Failure(description: "cannot mount a tmpfs on \(path): errno \(errno)")
        }
    }

    /// Writes a file that leaves `bytes` free.
    func fill(leaving bytes: Int) throws {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { throw AgentProcess.Failure(description: "statvfs \(path)") }
        let free = Int(info.f_bavail) * Int(info.f_frsize)
        guard FileManager.default.createFile(atPath: filler, contents: Data(count: max(0, free - bytes))) else {
            throw AgentProcess.Failure(description: "cannot fill \(path)")
        }
    }

    func free() { try? FileManager.default.removeItem(atPath: filler) }

    deinit { umount2(path, Int32(MNT_DETACH)) }
}
