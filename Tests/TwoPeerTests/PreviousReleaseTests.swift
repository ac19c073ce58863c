import Foundation
import Testing
@testable import PulseStore

/// The previous release and this tree in one household (issue 53, docs/RELEASING.md): the
/// agent of the newest tagged release before HEAD (`scripts/build-release.sh previous`, which
/// `scripts/test.sh` runs: `PULSE_PREVIOUS_BINARY`) and this tree's, with real processes, each
/// dialing the other and each creating the household in turn. What either writes, of every
/// kind a family writes, reaches the other; the exports agree; each status names the other's
/// release and says in sync. Then a downgrade: the previous release's binary on this one's home
/// reads it, or refuses it in words and leaves it as it was.
@Suite(.serialized) struct PreviousReleaseTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    /// The previous release's binary, or why there is none to test against.
    static let previous: Result<String, Reason> = {
        switch ProcessInfo.processInfo.environment["PULSE_PREVIOUS_BINARY"] {
        case nil, "":
            return .failure(.notBuilt)
        case "none":
            return .failure(.noEarlierRelease)
        case let path?:
            return FileManager.default.isExecutableFile(atPath: path) ? .success(path) : .failure(.notBuilt)
        }
    }()

    enum Reason: Error {
        case notBuilt, noEarlierRelease
    }

    /// The release a binary names (`pulse-peer 0.10.0 (commit …)` → `0.10.0`).
    func release(of binary: String?) throws -> String {
        let words = try PulsePeer.run(["--version"], binary: binary).stdout.split(separator: " ")
        return words.count > 1 ? String(words[1]) : ""
    }

    /// Writes of every kind through `home`'s CLI (its own release's), named with `tag`.
    func writeEverything(_ home: Home, _ tag: String, parents: Bool) throws {
        if parents {
            try home.run(["kids", "pin", "set", "--pin-stdin"], stdin: "1234\n")
            try home.run(["kids", "add", "Sam", "--pin-stdin"], stdin: "1234\n")
            try home.run(["kids", "select", "chore_001", "reward_001", "--pin-stdin"], stdin: "1234\n")
            try home.run(["kids", "adjust", "Sam", "--add", "10", "--reason", "Pocket money", "--pin-stdin"], stdin: "1234\n")
            try home.run(["household", "rename", "The Smiths"])
            try home.run(["settings", "celebrations", "off"])
        } else {
            try home.run(["kids", "done", "Sam", "chore_001"])
        }
        try home.run(["shop", "add", "Milk \(tag)", "Eggs \(tag)"])
        try home.run(["shop", "check", "Eggs \(tag)"])
        try home.run(["task", "add", "Laundry \(tag)"])
        try home.run(["recurring", "add", "Water the plants \(tag)", "--weekly", "mon,thu"])
        try home.run(["backlog", "category", "add", "Garden \(tag)"])
        try home.run(["backlog", "add", "Garden \(tag)", "Fence \(tag)"])
        try home.run(["member", "add", "Mia \(tag)"])
    }

    /// The entities this release added since the previous one, which that release keeps and
    /// relays without showing (the open schema): the shopping check-offs, lists and trips (issue 57),
    /// the days away and the swapped turns of rotating chores, the kids' savings goals and chore reports (issue 58),
    /// the app passwords and calendar objects (issue 59).
    static let addedSince = [
        "shopping_checkoff", "shopping_list", "shopping_trip", "away", "rotation_swap", "savings_goal", "chore_report", "app_password",
        "calendar_object",
    ]

    /// `home`'s export as the previous release can show it: without ``addedSince`` (both sides
    /// read through the same serialization, so that they compare).
    func shown(_ home: Home) throws -> String {
        var export = try JSONSerialization.jsonObject(with: Data(home.export().utf8)) as? [String: Any] ?? [:]
        if var entities = export["entities"] as? [String: Any] {
            for name in Self.addedSince { entities[name] = nil }
            export["entities"] = entities
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: export, options: [.sortedKeys, .prettyPrinted]), as: UTF8.self)
    }

    /// The previous release's binary; nil when HEAD is the first tagged release (nothing
    /// before it to meet) or, recorded as a failure, when it was not built.
    func previousBinary() -> String? {
        switch Self.previous {
        case let .success(path): return path
        case .failure(.noEarlierRelease): return nil
        case .failure(.notBuilt):
            Issue.record("no previous release's agent: build it with `scripts/build-release.sh previous` (scripts/test.sh does) and set PULSE_PREVIOUS_BINARY")
            return nil
        }
    }

    @Test(arguments: [true, false])
    func thePreviousReleaseAndThisOneSyncEverythingBothWays(previousDials: Bool) throws {
        guard let previous = previousBinary() else { return }
        var old = Home(path: scratch.home("old")), new = Home(path: scratch.home("new"))
        old.binary = previous
        // The one who dials joins the other's household.
        let (first, second) = previousDials ? (new, old) : (old, new)
        try first.run(["init"])
        let firstAgent = try AgentProcess(home: first.path, binary: first.binary)
        let code = try first.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try second.run(["join", code, "--peer", firstAgent.address, "--name", "Second"])
        let secondAgent = try AgentProcess(home: second.path, ["--peer", firstAgent.address], binary: second.binary)
        try second.waitUntil("synced")
        for (home, tag, parents) in [(first, "first", true), (second, "second", false)] {
            try writeEverything(home, tag, parents: parents)
        }
        try first.waitUntil("synced")
        try second.waitUntil("synced")
        #expect(
            eventually(timeout: 30) { (try? shown(old)) == (try? shown(new)) },
            "the previous release and this one hold different households:\n\((try? shown(old)) ?? "")\n---\n\((try? shown(new)) ?? "")")
        let export = try new.export()
        for tag in ["first", "second"] {
            for text in ["Milk \(tag)", "Laundry \(tag)", "Water the plants \(tag)", "Mia \(tag)", "Fence \(tag)"] {
                #expect(export.contains(text), "\(text) is missing")
            }
        }
        #expect(export.contains("The Smiths") && export.contains("Pocket money"))
        // Each names the other's release, in sync.
        for (home, other) in [(old, new), (new, old)] {
            let status = try home.waitUntil("synced")
            let peer = (status["peers"] as? [[String: Any]])?.first
            #expect(peer?["inSync"] as? Bool == true, "\(status)")
            #expect(peer?["release"] as? String == (try release(of: other.binary)), "\(status)")
        }
        #expect(secondAgent.stop() == 0)
        #expect(firstAgent.stop() == 0)

        // A downgrade: the previous release's binary on this release's home either reads it
        // (the same data format) or refuses it in words and changes nothing (a newer format).
        var downgraded = new
        downgraded.binary = previous
        let database = URL(fileURLWithPath: new.path).appendingPathComponent("household.sqlite")
        try Connection(path: database.path).execute("PRAGMA wal_checkpoint(TRUNCATE)") // all of it in the file
        let before = try Data(contentsOf: database)
        let listed = try downgraded.run(["shop", "list", "--json"], orFail: false)
        if listed.status == 0 {
            #expect(listed.stdout.contains("Milk first"), "\(listed.stdout)")
        } else {
            #expect(listed.stderr.contains("last written by a newer pulse-peer"), "\(listed.stderr)")
            #expect(try Data(contentsOf: database) == before, "the refused home was changed")
        }
    }

    /// A family upgrading one computer at a time: B, of the previous release, in step with A
    /// (this one), is stopped and started again as this release. Its home is migrated at
    /// start (the agent's own writes before any session), and both computers are in sync
    /// within a second of its start, then within a second of a write on either side; nothing
    /// either wrote is lost, and A's status names B's new release.
    @Test func aComputerUpgradedInPlaceIsInSyncWithinASecondOfItsStart() throws {
        guard let previous = previousBinary() else { return }
        let a = Home(path: scratch.home("a"))
        var b = Home(path: scratch.home("b"))
        b.binary = previous
        try a.run(["init"])
        let agentA = try AgentProcess(home: a.path)
        defer { agentA.stop() }
        try b.pair(with: a, at: agentA)
        var agentB = try AgentProcess(home: b.path, ["--peer", agentA.address], binary: previous)
        try b.waitUntil("synced")
        try writeEverything(a, "first", parents: true)
        try b.waitUntil("synced")
        try writeEverything(b, "second", parents: false)
        // A field the previous release does not know (issue 57's quantity and note): B keeps the
        // item and shows it without them, edits what it knows, and shows them once upgraded.
        try a.run(["shop", "add", "2 kg Flour", "--note", "the fine one"])
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        let flourOnB = try b.run(["shop", "list", "--json"]).stdout
        #expect(flourOnB.contains("\"Flour\"") && !flourOnB.contains("2 kg") && !flourOnB.contains("fine one"), "\(flourOnB)")
        try b.run(["shop", "rename", "Flour", "Rye flour"])
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        let flourOnA = try a.run(["shop", "list", "--json"]).stdout
        #expect(flourOnA.contains("\"Rye flour\"") && flourOnA.contains("\"2 kg\"") && flourOnA.contains("\"the fine one\""), "\(flourOnA)")
        // A list the previous release does not know (issue 57's lists, decision 0020): B shows its
        // items on its one list, and on their own list once upgraded.
        try a.run(["shop", "lists", "add", "Lidl"])
        try a.run(["shop", "--list", "Lidl", "add", "Butter"])
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        #expect(try b.shoppingNames().contains("Butter"), "the previous release shows Lidl's Butter on its list")
        #expect(agentB.stop() == 0)
        let schema = { () throws -> Int64 in
            try Connection(path: b.path + "/household.sqlite").scalarInt("PRAGMA user_version") ?? 0
        }
        let schemaBefore = try schema()
        // A writes while B is being upgraded.
        try a.run(["shop", "add", "While B was upgraded"])
        b.binary = nil
        agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        defer { agentB.stop() }
        let started = Date()
        for home in [b, a] { _ = try home.waitUntil("synced", timeout: 1) }
        let took = Date().timeIntervalSince(started)
        #expect(took < 1, "in sync \(took) s after the upgraded agent's start")
        print("upgraded B in sync \(String(format: "%.2f", took)) s after its start")
        #expect(try schema() > schemaBefore, "B's home was not migrated (schema \(schemaBefore))")
        for (home, other, name) in [(b, a, "Upgraded B's"), (a, b, "A's after the upgrade")] {
            try home.run(["shop", "add", name])
            for side in [home, other] { _ = try side.waitUntil("synced", timeout: 1) }
        }
        #expect(try a.export() == b.export())
        let names = Set(try b.shoppingNames())
        for name in ["Milk first", "Milk second", "While B was upgraded", "Upgraded B's", "A's after the upgrade"] {
            #expect(names.contains(name), "\(name) is missing: \(names)")
        }
        #expect(try b.run(["shop", "--list", "Lidl", "list", "--json"]).stdout.contains("\"Butter\""), "upgraded B: Butter on Lidl")
        #expect(!(try b.shoppingNames().contains("Butter")), "upgraded B: Butter off the first list")
        let flour = try b.run(["shop", "list", "--json"]).stdout
        #expect(flour.contains("\"Rye flour\"") && flour.contains("\"2 kg\"") && flour.contains("\"the fine one\""), "upgraded B: \(flour)")
        let peer = (try a.status()["peers"] as? [[String: Any]])?.first
        #expect(peer?["release"] as? String == (try release(of: nil)), "\(String(describing: peer))")
    }
}
