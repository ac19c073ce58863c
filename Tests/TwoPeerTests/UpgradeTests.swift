import Foundation
import Testing
@testable import PulseStore

/// A household made by the previous release (schema 7, records in format 1:
/// `Tests/fixtures/v7-home`, made with `pulse-peer` at commit 73c1a19 — init with two
/// members, shopping items one of them checked, tasks, a backlog item renamed, a
/// recurring task, a kid with a selected rule done once) opens with this one, migrated,
/// and syncs with a machine that joins it now.
@Suite struct UpgradeTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures")

    @Test func aVersion7HomeOpensMigratedAndSyncsWithANewMachine() throws {
        let a = Home(path: scratch.home("a"))
        try FileManager.default.copyItem(atPath: Self.fixtures.appendingPathComponent("v7-home").path, toPath: a.path)
        // git keeps no permissions but the executable bit: a home is private.
        chmod(a.path, 0o700)
        for file in try FileManager.default.contentsOfDirectory(atPath: a.path) { chmod(a.path + "/" + file, 0o600) }
        let database = a.path + "/household.sqlite"
        var oldClock: Int64 = 0
        do {
            let old = try Connection(path: database, mode: .readOnly)
            #expect(try old.scalarInt("PRAGMA user_version") == 7)
            oldClock = try old.scalarInt("SELECT value FROM meta WHERE key = 'hlc'") ?? 0
        }
        #expect(oldClock > 0)
        // Every value as the previous release exported it.
        let expected = try String(contentsOf: Self.fixtures.appendingPathComponent("v7-home.export.json"), encoding: .utf8)
        #expect(try a.export() == expected)
        do {
            let migrated = try Connection(path: database, mode: .readOnly)
            #expect(try migrated.scalarInt("PRAGMA user_version") == Int64(Migrations.latest))
            #expect(try migrated.scalarInt("SELECT count(*) FROM shopping_item WHERE substr(versions, 1, 1) <> x'02'") == 0)
            #expect(try migrated.scalarInt("SELECT count(*) FROM task WHERE substr(versions, 1, 1) <> x'02'") == 0)
        }
        let agentA = try AgentProcess(home: a.path)
        let b = Home(path: scratch.home("b"))
        try b.pair(with: a, at: agentA)
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        #expect(try a.export() == b.export())
        #expect(Set(try b.shoppingNames()) == Set(try a.shoppingNames()))
        try b.run(["shop", "add", "Butter"])
        try a.waitUntil("synced")
        #expect(try eventually(timeout: 10) { try a.shoppingNames().contains("Butter") })
        try a.run(["task", "done", "Water plants"])
        do {
            // The clock, kept in `meta` before migration 9 and in this replica's row of the
            // version vector since, went on from where it was.
            let migrated = try Connection(path: database, mode: .readOnly)
            #expect(try migrated.scalarInt("SELECT max(hlc) FROM version_vector") ?? 0 > oldClock)
        }
        try b.waitUntil("synced")
        #expect(try eventually(timeout: 10) { try a.export() == b.export() })
        #expect(agentB.stop() == 0)
        #expect(agentA.stop() == 0)
    }

    /// A downgrade (an older package over a newer home, an older release restoring a newer
    /// backup): refused at once, in the reader's words, and the home left exactly as it was.
    @Test func aHomeANewerReleaseWroteIsRefusedInWordsAndLeftAsItWas() throws {
        let a = Home(path: scratch.home("a"))
        try a.run(["init"])
        try a.run(["shop", "add", "Milk"])
        let database = a.path + "/household.sqlite"
        do {
            let connection = try Connection(path: database)
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA user_version = \(Migrations.latest + 1)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let list = try a.run(["shop", "list"], orFail: false)
        #expect(list.status != 0)
        #expect(
            list.stderr.contains("last written by a newer pulse-peer (data format \(Migrations.latest + 1); this one reads up to \(Migrations.latest))"),
            "\(list.stderr)")
        let polish = try a.run(["shop", "add", "Bread", "--lang", "pl"], orFail: false)
        #expect(polish.status != 0 && polish.stderr.contains("zapisał ostatnio nowszy pulse-peer"), "\(polish.stderr)")
        let agent = try PulsePeer.run(["run", "--home", a.path, "--no-mdns", "--port", "0", "--web", "off"])
        #expect(agent.status != 0 && agent.stderr.contains("newer pulse-peer"), "\(agent.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before, "the home was changed")
    }
}
