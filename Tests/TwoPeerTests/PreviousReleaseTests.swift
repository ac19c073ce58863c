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

    @Test(arguments: [true, false])
    func thePreviousReleaseAndThisOneSyncEverythingBothWays(previousDials: Bool) throws {
        let previous: String
        switch Self.previous {
        case let .success(path): previous = path
        case .failure(.noEarlierRelease): return // HEAD is the first tagged release: nothing before it to meet
        case .failure(.notBuilt):
            Issue.record("no previous release's agent: build it with `scripts/build-release.sh previous` (scripts/test.sh does) and set PULSE_PREVIOUS_BINARY")
            return
        }
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
            eventually(timeout: 30) { (try? old.export()) == (try? new.export()) },
            "the previous release and this one hold different households:\n\((try? old.export()) ?? "")\n---\n\((try? new.export()) ?? "")")
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
}
