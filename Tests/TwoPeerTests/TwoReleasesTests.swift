import Foundation
import Testing

/// Two releases in one household (issue 53): agents built from two schemas — this tree, and the
/// "next" test release built from it with `PULSE_NEXT_RELEASE` (`scripts/build-next.sh`: a
/// `note` entity and `shopping_item.brand` more, nothing else) — with no protocol change
/// between them. A (next) ↔ B (this release) ↔ C (next), A and C never connected: what A writes
/// in the new entity and field reaches C intact **through** B, and back; B keeps syncing what it
/// knows both ways and shows nothing it cannot read; a B that was offline while A wrote catches
/// up and relays; B upgraded in place shows the new data at once, with no peer to re-sync from.
@Suite(.serialized) struct TwoReleasesTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    /// The next release's binary: `PULSE_NEXT_BINARY` (scripts/test.sh builds it), else where
    /// `scripts/build-next.sh` puts it.
    static let next: String? = {
        if let path = ProcessInfo.processInfo.environment["PULSE_NEXT_BINARY"], !path.isEmpty { return path }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = repository.appendingPathComponent(".build-next/pulse-peer").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    func eventuallyExport(_ home: Home, contains texts: [String], timeout: TimeInterval = 30) throws -> Bool {
        try eventually(timeout: timeout) {
            let export = try home.export()
            return texts.allSatisfy { export.contains($0) }
        }
    }

    @Test func aLaterReleasesEntityAndFieldCrossAnOlderAgentBothWaysAndBecomeLiveWhenItIsUpgraded() throws {
        guard let next = Self.next else {
            Issue.record("no next test release: build it with scripts/build-next.sh (scripts/test.sh does)")
            return
        }
        var a = Home(path: scratch.home("a")), c = Home(path: scratch.home("c"))
        let b = Home(path: scratch.home("b"))
        a.binary = next
        c.binary = next
        try a.run(["init"])
        let agentA = try AgentProcess(home: a.path, binary: next)
        let codeForB = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try b.run(["join", codeForB, "--peer", agentA.address, "--name", "B"])
        var agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        let codeForC = try b.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try c.run(["join", codeForC, "--peer", agentB.address, "--name", "C"])
        let agentC = try AgentProcess(home: c.path, ["--peer", agentB.address], binary: next)
        try b.waitUntil("synced", peers: 2)

        // A writes the new entity and the new field; C has them, through B.
        _ = try a.api("shop.add", ["names": ["Flour"]])
        _ = try a.api("next.shop.brand", ["name": "Flour", "brand": "Acme"])
        _ = try a.api("next.note.add", ["title": "Call the plumber"])
        #expect(try eventuallyExport(c, contains: ["Call the plumber", "\"Acme\"", "Flour"]), "C never got A's note and brand through B")
        // B syncs what it knows, and shows nothing it cannot read.
        #expect(try eventuallyExport(b, contains: ["Flour"]))
        let exportOfB = try b.export()
        #expect(!exportOfB.contains("plumber") && !exportOfB.contains("Acme") && !exportOfB.contains("brand"), "\(exportOfB)")
        // Both ways: B's own change reaches A and C; C's brand reaches A through B.
        try b.run(["shop", "add", "Milk"])
        #expect(try eventuallyExport(a, contains: ["Milk"]) && eventuallyExport(c, contains: ["Milk"]))
        _ = try c.api("next.shop.brand", ["name": "Milk", "brand": "Bolt"])
        #expect(try eventuallyExport(a, contains: ["\"Bolt\""]), "A never got C's brand through B")
        try b.waitUntil("synced", peers: 2)

        // B offline while A writes: it catches up when it is back, and relays to C.
        #expect(agentB.stop() == 0)
        _ = try a.api("next.note.add", ["title": "Fix the fence"])
        _ = try a.api("shop.add", ["names": ["Eggs"]])
        _ = try a.api("next.shop.brand", ["name": "Eggs", "brand": "Coop"])
        // (On another port: B now dials C too, as C's dialer knew B's former one.)
        agentB = try AgentProcess(home: b.path, ["--peer", agentA.address, "--peer", agentC.address])
        #expect(try eventuallyExport(c, contains: ["Fix the fence", "\"Coop\"", "Eggs"]), "C never got what A wrote while B was away")
        try b.waitUntil("synced", peers: 2)
        #expect(agentB.stop() == 0)

        // B upgraded in place, started with no peer at all: what it kept is live at once.
        var upgraded = b
        upgraded.binary = next
        let agentBNext = try AgentProcess(home: b.path, binary: next)
        let exportOfUpgraded = try upgraded.export()
        for text in ["Call the plumber", "Fix the fence", "\"Acme\"", "\"Bolt\"", "\"Coop\""] {
            #expect(exportOfUpgraded.contains(text), "the upgraded B does not show \(text)")
        }
        #expect(exportOfUpgraded == (try a.export()), "the upgraded B differs from A")
        #expect(exportOfUpgraded == (try c.export()), "the upgraded B differs from C")
        #expect(agentBNext.stop() == 0)
        #expect(agentC.stop() == 0)
        #expect(agentA.stop() == 0)
    }
}
