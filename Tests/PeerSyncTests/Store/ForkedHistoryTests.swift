import Foundation
import Testing
@testable import PulseModel
@testable import PulseProtocol
@testable import PulseStore

/// Histories that forked (PulseStore/Histories.swift, docs/PROTOCOL.md §5): a database put
/// back to an older copy numbers new changes with numbers its peers hold for others; any two
/// holders that meet find it and heal it the same way, whoever meets whom first.
@Suite struct ForkedHistoryTests {
    static let row: RowFields = ["machine": .text(String(repeating: "ab", count: 32)), "label": .text("restored")]
    /// One meeting of two stores as a protocol-9 session runs it: the VECTORs compared
    /// (``HistoryRules``), a fork found by the stamps exchanged and healed on both sides, a
    /// peer's seal carried out; each heal starts the session again; then the catch-up both ways.
    static func meet(_ x: ReplicaStore, _ y: ReplicaStore) throws {
        // A machine behind itself (the peer holds more of its replica than it made) continues
        // as a new replica first, as the agent does (PulseStore/Rewind.swift).
        for (store, peer) in [(x, y), (y, x)] where try peer.versionVector()[store.replicaID] > store.publishedSeq() {
            _ = try store.continueAsNewReplica(replicaRow: row)
        }
        for _ in 0..<16 where try reconcile(x, y) {}
        // Each side marks what it sends as published before sending it, as the agent does.
        try x.markPublished(upTo: x.versionVector()[x.replicaID])
        try x.sync(to: y)
        try y.markPublished(upTo: y.versionVector()[y.replicaID])
        try y.sync(to: x)
    }

    /// True when something was healed (the session would start again).
    static func reconcile(_ x: ReplicaStore, _ y: ReplicaStore) throws -> Bool {
        let hx = try x.historyHeads(), hy = try y.historyHeads()
        let origins = Set(hx.entries.keys).union(hy.entries.keys).sorted()
        func verdict(_ store: ReplicaStore, mine: HistoryHeads, theirs: HistoryHeads, _ origin: ReplicaID) throws -> HistoryRules.Verdict {
            let at = theirs[origin].seq > 0 && theirs[origin].seq <= mine[origin].seq ? try store.stamp(of: origin, theirs[origin].seq) : 0
            return HistoryRules.verdict(mine: mine[origin], theirs: theirs[origin], mineAtTheirs: at)
        }
        for origin in origins {
            let forked = [try verdict(x, mine: hx, theirs: hy, origin), try verdict(y, mine: hy, theirs: hx, origin)].contains {
                if case .forked = $0 { true } else { false }
            }
            guard forked else { continue }
            let upTo = min(hx[origin].seq, hy[origin].seq)
            let sx = try x.historyStamps(of: origin, upTo: upTo), sy = try y.historyStamps(of: origin, upTo: upTo)
            let f = try #require(HistoryRules.forkPoint(mine: sx, theirs: sy))
            #expect(HistoryRules.forkPoint(mine: sy, theirs: sx) == f, "both sides find the same fork point")
            for (store, stamps) in [(x, sx), (y, sy)] {
                _ = try store.healFork(
                    of: origin, from: f, into: HistoryRules.branch(of: origin, forkAt: f, hlc: stamps[Int(f) - 1]), replicaRow: Self.row)
            }
            return true
        }
        var healed = false
        for (store, mine, theirs) in [(x, hx, hy), (y, hy, hx)] {
            for origin in origins {
                switch try verdict(store, mine: mine, theirs: theirs, origin) {
                case let .sealBeyond(seal):
                    let branch = HistoryRules.branch(of: origin, forkAt: seal + 1, hlc: try store.stamp(of: origin, seal + 1))
                    _ = try store.healFork(of: origin, from: seal + 1, into: branch, replicaRow: Self.row)
                    healed = true
                case let .adoptSeal(seal):
                    if try store.adoptSeal(of: origin, at: seal, replicaRow: Self.row) != nil { healed = true }
                default: break
                }
            }
        }
        return healed
    }

    static func add(_ store: ReplicaStore, _ name: String, clock: ManualClock) throws -> String {
        clock.advance(1000)
        let id = UUID().uuidString.lowercased()
        _ = try store.write(member: nil) { try $0.put(.shoppingItem, id, shoppingItem(name)) }
        return id
    }

    static func check(_ store: ReplicaStore, _ id: String, clock: ManualClock) throws {
        clock.advance(1000)
        _ = try store.write(member: nil) { try $0.put(.shoppingItem, id, ["state": .text("restock")]) }
    }

    static func names(_ store: ReplicaStore) throws -> Set<String> {
        Set(try store.canonicalState()[.shoppingItem, default: [:]].values.compactMap { $0["name"]?.textValue })
    }

    /// A, B and C in sync; A's home copied; A adds L1–L5 (C gets them); A put back to the copy
    /// adds N1…Nk; A meets B first, then the others meet in every order.
    @Test(arguments: [3, 5, 6, 9])
    func aRestoredMachineThatMeetsAStalePeerFirstLosesNothingAnywhere(k: Int) throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock()
        let a = try makeStore(dir, "a", clock: clock, id: 1)
        let b = try makeStore(dir, "b", clock: clock, id: 2)
        let c = try makeStore(dir, "c", clock: clock, id: 3)
        var expected: Set<String> = []
        for name in ["S1", "S2", "S3"] {
            _ = try Self.add(a, name, clock: clock)
            expected.insert(name)
        }
        try Self.meet(a, b)
        try Self.meet(a, c)
        try StoreBackup.write(database: a.path, to: dir.path("copy.sqlite"))
        var lost: [String] = []
        for index in 1...5 {
            lost.append(try Self.add(a, "L\(index)", clock: clock))
            expected.insert("L\(index)")
        }
        try Self.check(a, lost[1], clock: clock) // an overwritten number: its stamp travels as a stub
        try Self.meet(a, c)
        // A put back to the copy (the live file is gone with the computer's disk).
        let restored = try ReplicaStore(path: dir.path("copy.sqlite"), physicalClock: clock.function)
        #expect(restored.replicaID == a.replicaID)
        var made: [String] = []
        for index in 1...k {
            made.append(try Self.add(restored, "N\(index)", clock: clock))
            expected.insert("N\(index)")
        }
        try Self.check(restored, made[0], clock: clock)
        try Self.meet(restored, b)
        for (x, y) in [(b, c), (restored, c), (restored, b), (b, c)] { try Self.meet(x, y) }
        for store in [restored, b, c] {
            #expect(try Self.names(store) == expected, "every name everywhere")
        }
        #expect(try restored.canonicalState() == b.canonicalState())
        #expect(try b.canonicalState() == c.canonicalState())
        #expect(try restored.versionVector() == b.versionVector())
        #expect(try b.versionVector() == c.versionVector())
        #expect(try b.seals()[ReplicaID(rawValue: 1)] == 3, "A's history ends where it forked, on every holder")
        #expect(restored.replicaID != ReplicaID(rawValue: 1), "the restored machine continues under a new id")
        // And the household goes on: a write of the restored machine reaches the others.
        _ = try Self.add(restored, "after", clock: clock)
        try Self.meet(restored, c)
        #expect(try Self.names(c).contains("after"))
    }

    /// Seeded runs: three to five machines, one of them put back to an older copy once or
    /// twice, machines meeting at random; once all have met, every store holds every name,
    /// the same state and the same vector.
    @Test(arguments: Array(UInt64(1)...UInt64(24)))
    func randomizedRestoresConverge(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let dir = try TemporaryDirectory()
        let clock = ManualClock()
        let count = Int.random(in: 3...5, using: &random)
        var stores = try (0..<count).map { try makeStore(dir, "m\($0)", clock: clock, id: UInt64($0 + 1)) }
        var expected: Set<String> = []
        var ids: [String] = []
        var copies: [(index: Int, path: String)] = []
        var counter = 0
        // Names only the machine put back held (never sent before its disk was lost).
        var mayLose: Set<String> = []
        for step in 0..<120 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let index = Int.random(in: 0..<count, using: &random)
                counter += 1
                ids.append(try Self.add(stores[index], "n\(counter)", clock: clock))
                expected.insert("n\(counter)")
            case 5:
                guard let id = ids.randomElement(using: &random) else { break }
                let index = Int.random(in: 0..<count, using: &random)
                if try stores[index].row(.shoppingItem, id).isEmpty == false { try Self.check(stores[index], id, clock: clock) }
            case 6 where copies.count < 3:
                let index = Int.random(in: 0..<count, using: &random)
                let path = dir.path("copy\(step).sqlite")
                try StoreBackup.write(database: stores[index].path, to: path)
                copies.append((index, path))
            case 7 where !copies.isEmpty && Int.random(in: 0..<3, using: &random) == 0:
                // Put a machine back to its copy: what it made since is only where it went.
                let copy = copies.removeFirst()
                let others = try stores.indices.filter { $0 != copy.index }.reduce(into: Set<String>()) { $0.formUnion(try Self.names(stores[$1])) }
                stores[copy.index] = try ReplicaStore(path: copy.path, physicalClock: clock.function)
                mayLose.formUnion(expected.subtracting(others).subtracting(try Self.names(stores[copy.index])))
            default:
                let x = Int.random(in: 0..<count, using: &random)
                let y = (x + Int.random(in: 1..<count, using: &random)) % count
                try Self.meet(stores[x], stores[y])
            }
        }
        // Everyone meets everyone until nothing changes.
        for _ in 0..<4 {
            for x in 0..<count { for y in 0..<count where x != y { try Self.meet(stores[x], stores[y]) } }
        }
        let held = try stores.reduce(into: Set<String>()) { $0.formUnion(try Self.names($1)) }
        for store in stores {
            #expect(try Self.names(store) == held)
            #expect(try store.canonicalState() == stores[0].canonicalState())
            #expect(try store.versionVector() == stores[0].versionVector())
        }
        #expect(held.isSubset(of: expected))
        #expect(expected.subtracting(mayLose).isSubset(of: held), "nothing lost that another machine held")
    }

    /// Two sessions bring the two branches at once, so neither VECTOR showed the fork: the
    /// second branch is refused as it arrives — a number already covered with another stamp,
    /// or a claim continuing another history (told by an ACK's vector) — and healed at the next
    /// meeting.
    @Test func aSecondHistoryArrivingWhileTheFirstIsHeldIsRefusedAndHealedAtTheNextMeeting() throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock()
        let a = try makeStore(dir, "a", clock: clock, id: 1)
        let c = try makeStore(dir, "c", clock: clock, id: 3)
        _ = try Self.add(a, "S1", clock: clock)
        try Self.meet(a, c)
        try StoreBackup.write(database: a.path, to: dir.path("copy.sqlite"))
        for name in ["L1", "L2", "L3"] { _ = try Self.add(a, name, clock: clock) }
        try Self.meet(a, c)
        let restored = try ReplicaStore(path: dir.path("copy.sqlite"), physicalClock: clock.function)
        for name in ["N1", "N2"] { _ = try Self.add(restored, name, clock: clock) }
        // D, new, gets C's batches computed from its empty vector, after the restored machine's.
        let d = try makeStore(dir, "d", clock: clock, id: 4)
        let fromC = try c.allDeltas(for: d.versionVector())
        try restored.markPublished(upTo: restored.versionVector()[restored.replicaID])
        try restored.sync(to: d)
        let before = try d.canonicalState()
        #expect {
            for batch in fromC { try d.apply(batch) }
        } throws: { error in
            if case StoreError.anotherHistory = error { true } else { false }
        }
        #expect(try d.canonicalState() == before)
        // And a claim computed from D's vector as an ACK told it (no VECTOR compared).
        let continuing = try c.allDeltas(for: d.versionVector())
        #expect(continuing.flatMap(\.coverage).contains { $0.origin == a.replicaID && $0.afterCheck != 0 })
        #expect {
            for batch in continuing { try d.apply(batch) }
        } throws: { error in
            if case StoreError.anotherHistory = error { true } else { false }
        }
        #expect(try d.canonicalState() == before)
        for (x, y) in [(d, c), (restored, d), (restored, c), (d, c)] { try Self.meet(x, y) }
        let expected: Set<String> = ["S1", "L1", "L2", "L3", "N1", "N2"]
        for store in [restored, c, d] { #expect(try Self.names(store) == expected) }
    }

    @Test func aChangeOverwrittenBeforeItWasSentTravelsAsAStubOfItsStamp() throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock()
        let a = try makeStore(dir, "a", clock: clock, id: 1)
        let b = try makeStore(dir, "b", clock: clock, id: 2)
        let id = try Self.add(a, "milk", clock: clock)
        try Self.check(a, id, clock: clock)
        try Self.check(a, id, clock: clock) // #2 overwritten by #3
        let stamp = try a.stamp(of: a.replicaID, 2)
        #expect(stamp > 0)
        let batches = try a.allDeltas(for: VersionVector())
        #expect(batches.flatMap(\.stubs) == [ChangeStub(origin: a.replicaID, seq: 2, hlc: stamp)])
        try a.sync(to: b)
        #expect(try b.historyStamps(of: a.replicaID, upTo: 3) == a.historyStamps(of: a.replicaID, upTo: 3))
        #expect(try b.historyHeads()[a.replicaID] == HistoryHead(seq: 3, stamp: try a.stamp(of: a.replicaID, 3)))
    }

    @Test func aBatchBeyondASealIsRefusedWhole() throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock()
        let a = try makeStore(dir, "a", clock: clock, id: 1)
        let b = try makeStore(dir, "b", clock: clock, id: 2)
        _ = try Self.add(a, "milk", clock: clock)
        try a.sync(to: b)
        _ = try b.adoptSeal(of: a.replicaID, at: 1, replicaRow: Self.row)
        _ = try Self.add(a, "bread", clock: clock)
        let before = try b.canonicalState()
        #expect(throws: StoreError.self) { try a.sync(to: b) }
        #expect(try b.canonicalState() == before)
    }
}

@Suite struct HistoryRulesTests {
    static let r = ReplicaID(rawValue: 7)

    @Test(arguments: [
        // mine, theirs, my stamp at theirs → verdict
        (HistoryHead(seq: 5, stamp: 50), HistoryHead(seq: 5, stamp: 50), UInt64(50), HistoryRules.Verdict.same),
        (HistoryHead(seq: 5, stamp: 50), HistoryHead(seq: 3, stamp: 30), 30, .same),
        (HistoryHead(seq: 5, stamp: 50), HistoryHead(seq: 3, stamp: 31), 30, .forked(upTo: 3)),
        (HistoryHead(seq: 3, stamp: 31), HistoryHead(seq: 5, stamp: 50), 0, .same), // the peer judges
        (HistoryHead(seq: 5, stamp: 50), HistoryHead(seq: 3, stamp: 0), 30, .same), // unknown: no verdict
        (HistoryHead(seq: 5, stamp: 50), HistoryHead(seq: 3, stamp: 30, seal: 3), 30, .sealBeyond(seal: 3)),
        (HistoryHead(seq: 2, stamp: 20), HistoryHead(seq: 3, stamp: 30, seal: 3), 0, .adoptSeal(seal: 3)),
        (HistoryHead(seq: 3, stamp: 30, seal: 3), HistoryHead(seq: 3, stamp: 30, seal: 3), 30, .same),
        (HistoryHead(seq: 3, stamp: 30, seal: 3), HistoryHead(seq: 2, stamp: 20, seal: 2), 20, .sealBeyond(seal: 2)),
        (HistoryHead(seq: 2, stamp: 20, seal: 2), HistoryHead(seq: 3, stamp: 30, seal: 3), 0, .same),
        (HistoryHead(seq: 5, stamp: 50), HistoryHead(seq: 3, stamp: 31, seal: 3), 30, .forked(upTo: 3)), // a fork below the seal first
    ])
    func theVerdictOnOneOrigin(mine: HistoryHead, theirs: HistoryHead, at: UInt64, verdict: HistoryRules.Verdict) {
        #expect(HistoryRules.verdict(mine: mine, theirs: theirs, mineAtTheirs: at) == verdict)
    }

    @Test(
        arguments: [
            ([UInt64](), [UInt64](), UInt64?.none),
            ([1, 2, 3], [1, 2, 3], nil),
            ([1, 2, 3], [1, 2, 4], 3),
            ([1, 2, 3], [1, 5, 6], 2),
            ([1, 2, 3], [4, 5, 6], 1),
            ([1, 0, 3, 4], [1, 2, 3, 5], 4), // unknown between agreements
            ([1, 0, 0, 4], [1, 2, 3, 5], 2), // unknown just after the last agreement: cautious
            ([0, 0, 3], [1, 2, 4], 1),
            ([1, 2, 3, 4], [1, 2], nil),
        ] as [([UInt64], [UInt64], UInt64?)])
    func theForkPointIsAfterTheLastStampKnownAlike(mine: [UInt64], theirs: [UInt64], point: UInt64?) {
        #expect(HistoryRules.forkPoint(mine: mine, theirs: theirs) == point)
        #expect(HistoryRules.forkPoint(mine: theirs, theirs: mine) == point)
    }

    @Test func aStampsCheckIsZeroOnlyForAnUnknownStampAndSpreadsNeighbours() {
        #expect(HistoryHead.check(0) == 0)
        let checks = (UInt64(1)...1000).map { HistoryHead.check((1_800_000_000_000 << 16) + $0) }
        #expect(!checks.contains(0))
        #expect(Set(checks).count == checks.count, "consecutive stamps never share a check here")
    }

    @Test func aBranchIdDependsOnOriginPointAndStampAndIsNeverZero() {
        let one = HistoryRules.branch(of: Self.r, forkAt: 4, hlc: 99)
        #expect(one == HistoryRules.branch(of: Self.r, forkAt: 4, hlc: 99))
        #expect(one != HistoryRules.branch(of: Self.r, forkAt: 4, hlc: 98))
        #expect(one != HistoryRules.branch(of: Self.r, forkAt: 5, hlc: 99))
        #expect(one != HistoryRules.branch(of: ReplicaID(rawValue: 8), forkAt: 4, hlc: 99))
        #expect(one.rawValue != 0 && one != Self.r)
    }
}
