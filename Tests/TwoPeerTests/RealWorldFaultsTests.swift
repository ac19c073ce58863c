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
        // The agent notices within its one-second watch and exits non-zero, saying why.
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
        let run = try PulsePeer.run(["run", "--home", b.path, "--port", "0", "--listen", "127.0.0.1", "--no-mdns",
                                     "--peer", agentA.address], timeout: 20)
        #expect(run.status != 0)
        #expect(run.stderr.contains("is damaged") && run.stderr.contains("truncated"), "\(run.stderr)")
        #expect(run.stderr.contains("pulse-peer join"))
        let list = try PulsePeer.run(["shop", "list", "--home", b.path])
        #expect(list.status != 0 && list.stderr.contains("is damaged"))
        #expect(try a.appliedChanges() == 0)
        #expect(try a.shoppingNames().isEmpty)
        agentA.stop()
    }
}
