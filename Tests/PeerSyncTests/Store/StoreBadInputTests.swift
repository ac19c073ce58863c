import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore

/// Bad input to the store (a peer's batch, a file): refused in words, nothing changed.
@Suite struct StoreBadInputTests: StoreFixture {
    let dir: TemporaryDirectory
    let clock = ManualClock()

    init() throws { dir = try TemporaryDirectory() }

    func assertRefusedAndUnchanged(_ store: ReplicaStore, _ batch: DeltaBatch, mentioning text: String) throws {
        let state = try store.canonicalState(), vector = try store.versionVector(), clock = try store.lastTimestamp()
        #expect { try store.apply(batch) } throws: { String(describing: $0).contains(text) }
        #expect(try store.canonicalState() == state)
        #expect(try store.versionVector() == vector)
        #expect(try store.lastTimestamp() == clock)
    }

    @Test func malformedChangesAreRefusedAndChangeNothing() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.put(.shoppingItem, "ok", shoppingItem("Milk")) }
        let good = try a.allDeltas(for: VersionVector())[0]
        let origin = ReplicaID(rawValue: 0xC)
        func batch(_ fields: [FieldWrite], entity: EntityKind = .shoppingItem, row: String = "x", hlc: HybridTimestamp? = nil) -> DeltaBatch {
            let change = Change(
                origin: origin, seq: 1, hlc: hlc ?? HybridTimestamp(milliseconds: clock.now), member: nil,
                entity: entity, rowID: row, fields: fields)
            // A valid change first: the whole batch must be refused, not just the bad part.
            return DeltaBatch(changes: good.changes + [change], coverage: good.coverage + [Coverage(origin: origin, after: 0, upTo: 1)])
        }
        // A field this release does not know is kept (OpenSchemaTests), within the bounds of what is kept.
        try assertRefusedAndUnchanged(b, batch([FieldWrite(field: "Price!", value: .integer(3))]), mentioning: "a field name is")
        try assertRefusedAndUnchanged(b, batch([FieldWrite(field: "name", value: .integer(3))]), mentioning: "expected text")
        try assertRefusedAndUnchanged(
            b, batch([FieldWrite(field: "name", value: .text(String(repeating: "x", count: 10_000)))]),
            mentioning: "longer than")
        try assertRefusedAndUnchanged(b, batch([FieldWrite(field: "name", value: .text("x"))], row: "../etc"), mentioning: "invalid row id")
        // Changes in the receiver's own name that it never made.
        let forged = Change(
            origin: b.replicaID, seq: 7, hlc: HybridTimestamp(milliseconds: clock.now), member: nil,
            entity: .shoppingItem, rowID: "f", fields: [FieldWrite(field: "name", value: .text("Forged"))])
        try assertRefusedAndUnchanged(b, DeltaBatch(changes: [forged]), mentioning: "never made")
        try assertRefusedAndUnchanged(b, DeltaBatch(coverage: [Coverage(origin: b.replicaID, after: 0, upTo: 5)]), mentioning: "never made")
        // The good batch alone still applies.
        try b.apply(good)
        #expect(try b.value(.shoppingItem, "ok", "name") == .text("Milk"))
    }

    /// A write's fields are pairs as given (``RowFields``): the change lists them in the
    /// order of their names whatever order they came in, and a name given twice, an unknown
    /// one, a bad member or a bad value refuses the write and changes nothing.
    @Test func aWritesFieldsAreCheckedAndListedByName() throws {
        let (a, _) = try pair()
        let (_, made) = try a.write(member: "anna") { tx in
            _ = try tx.create(.shoppingItem, "i1", ["state": .text("active"), "listed": .integer(3), "name": .text("Milk")])
            _ = try tx.create(.shoppingItem, "i2", ["name": .text("Eggs"), "state": .text("active"), "listed": .integer(4)])
            _ = try tx.put(.task, "t1", RowFields(["title": .text("Bins"), "done": .bool(false), "created": .integer(1), "deleted": .bool(false)]))
        }
        #expect(
            made.map { $0.fields.map(\.field) } == [
                ["listed", "name", "state"], ["listed", "name", "state"],
                ["created", "deleted", "done", "title"],
            ])
        #expect(made.allSatisfy { $0.member == "anna" })
        let before = try a.canonicalState(), vector = try a.versionVector()
        func refused(_ member: String?, _ fields: RowFields, _ expected: ChangeValidationError) {
            #expect {
                try a.write(member: member) { tx in
                    _ = try tx.create(.shoppingItem, "ok", shoppingItem("Fine")) // a good change first: rolled back too
                    _ = try tx.create(.shoppingItem, "bad", fields)
                }
            } throws: { error in
                guard case let .invalidChange(reason, _, _) = error as? StoreError else { return false }
                return reason == expected
            }
        }
        refused(
            nil, ["name": .text("A"), "state": .text("active"), "name": .text("B"), "listed": .integer(1)],
            .duplicateField(.shoppingItem, "name"))
        refused(
            nil, ["name": .text("A"), "zz": .integer(1), "colour": .text("red"), "state": .text("active")],
            .unknownField(.shoppingItem, "colour")) // the first unknown name in name order
        refused("not a member id!", shoppingItem("A"), .badMember)
        refused(
            nil, ["name": .text(""), "state": .text("active"), "listed": .integer(1)],
            .badValue(.shoppingItem, field: "name", reason: "may not be empty"))
        refused(nil, [:], .emptyChange)
        #expect(try a.canonicalState() == before)
        #expect(try a.versionVector() == vector)
        #expect(a.connection.held.count == 0)
    }

    /// A write told it need not keep its changes returns none, and writes everything as
    /// the one that keeps them: rows, counter, clock and index.
    @Test func aWriteThatKeepsNoChangesWritesTheSame() throws {
        let (a, b) = try pair()
        let (count, kept) = try a.write(member: nil, keepingChanges: false) { tx in
            for i in 0..<150 { try tx.create(.shoppingItem, "n\(i)", shoppingItem("Item \(i)")) }
            return 150
        }
        #expect(count == 150 && kept.isEmpty)
        let (_, next) = try a.write(member: nil) { tx in _ = try tx.create(.shoppingItem, "last", shoppingItem("Last")) }
        #expect(next.map(\.seq) == [151])
        #expect(try a.versionVector()[a.replicaID] == 151)
        #expect(try a.connection.scalarInt("SELECT count(*) FROM change_index") == 151)
        try a.sync(to: b)
        #expect(try b.canonicalState() == (try a.canonicalState()))
        #expect(try b.allDeltas(for: VersionVector()).flatMap(\.changes).count == 151)
    }

    @Test func immutableFieldsCannotBeRewritten() throws {
        let (a, b) = try pair()
        let entry: [String: FieldValue] = [
            "kid": .text("k1"), "kind": .text("earn"), "peanuts": .integer(2), "selection": .null,
            "title": .text("Made the bed"), "created": .integer(5), "hidden": .bool(false),
        ]
        try a.write(member: nil) { try $0.put(.ledgerEntry, "e1", RowFields(entry)) }
        try a.sync(to: b)
        #expect(throws: StoreError.self) { try a.write(member: nil) { try $0.put(.ledgerEntry, "e1", ["peanuts": .integer(20)]) } }
        try a.write(member: nil) { try $0.put(.ledgerEntry, "e1", ["hidden": .bool(true)]) } // the one mutable field
        let tampered = Change(
            origin: ReplicaID(rawValue: 0xC), seq: 1, hlc: HybridTimestamp(milliseconds: clock.now), member: nil,
            entity: .ledgerEntry, rowID: "e1", fields: [FieldWrite(field: "peanuts", value: .integer(20))])
        try assertRefusedAndUnchanged(b, DeltaBatch(changes: [tampered]), mentioning: "set once")
    }

    @Test func theSchemaConstraintsHaveTheLastWord() throws {
        let (a, _) = try pair()
        #expect(throws: SQLiteError.self) {
            try a.connection.execute("INSERT INTO shopping_item (id, name, state, listed) VALUES ('z', 'Milk', 'bought', 1)")
        }
        #expect(throws: SQLiteError.self) {
            try a.connection.execute("INSERT INTO task (id, title, done, created, deleted) VALUES ('z', 'x', 2, 1, 0)")
        }
    }

    @Test func rowsAppearInTheirTableOnlyWhenComplete() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.sync(to: b)
        clock.advance(1)
        try a.write(member: nil) { try $0.put(.shoppingItem, "i2", shoppingItem("Eggs")) }
        try a.write(member: nil) { try $0.put(.shoppingItem, "i2", ["name": .text("Free-range eggs")]) }
        // Deliver only the rename (the second change) first: i2 is incomplete on B.
        let rename = try a.allDeltas(for: b.versionVector()).flatMap(\.changes).filter { $0.fields.map(\.field) == ["name"] }
        try b.apply(DeltaBatch(changes: rename))
        let count = { try b.connection.scalarInt("SELECT count(*) FROM shopping_item") }
        #expect(try count() == 1)
        try a.sync(to: b)
        #expect(try count() == 2)
        #expect(try b.value(.shoppingItem, "i2", "name") == .text("Free-range eggs"))
    }

    /// A machine whose clock is ahead: its far-future changes wait, everything else flows.
    @Test func changesStampedTooFarAheadAreHeldAndMergedWhenTheClockCatchesUp() throws {
        let (a, b) = try pair()
        let skewed = ReplicaID(rawValue: 0xC)
        let ahead = HybridTimestamp(milliseconds: clock.now + 15 * 60_000)
        let future = Change(
            origin: skewed, seq: 1, hlc: ahead, member: nil, entity: .shoppingItem, rowID: "f",
            fields: shoppingItem("From the future").map { FieldWrite(field: $0.key, value: $0.value) })
        try a.write(member: nil) { try $0.put(.shoppingItem, "ok", shoppingItem("Milk")) }
        let good = try a.allDeltas(for: VersionVector())[0]
        let outcome = try b.apply(
            DeltaBatch(
                changes: good.changes + [future],
                coverage: good.coverage + [Coverage(origin: skewed, after: 0, upTo: 1)]))
        // The good change is merged at once; the future one is kept, not merged, and not claimed.
        #expect(outcome.applied.map(\.rowID) == ["ok"])
        #expect(outcome.held == [future])
        #expect(try b.value(.shoppingItem, "ok", "name") == .text("Milk"))
        #expect(try b.row(.shoppingItem, "f").isEmpty)
        #expect(try b.versionVector()[skewed] == 0)
        #expect(try b.versionVector()[a.replicaID] == 1)
        #expect(try b.lastTimestamp() < ahead) // the clock was not dragged forward
        #expect(try b.heldChanges().count == 1)
        // Offered again: still held, once.
        _ = try b.apply(DeltaBatch(changes: [future], coverage: [Coverage(origin: skewed, after: 0, upTo: 1)]))
        #expect(try b.heldChanges().count == 1)
        #expect(try b.releaseHeldChanges() == nil) // not yet due
        // Five minutes on, the stamp is within the 10-minute bound: merged, and forgotten.
        clock.advance(5 * 60_000 + 1)
        let released = try #require(try b.releaseHeldChanges())
        #expect(released.applied == [future])
        #expect(try b.value(.shoppingItem, "f", "name") == .text("From the future"))
        #expect(try b.heldChanges().count == 0)
        // The coverage claimed while it was held is taken at once: no other session needed,
        // and a third machine gets the change from b.
        #expect(released.versionVector[skewed] == 1)
        #expect(try b.versionVector()[skewed] == 1)
        let c = try makeStore(dir, "c", clock: clock, id: 0xD)
        try b.sync(to: c)
        #expect(try c.value(.shoppingItem, "f", "name") == .text("From the future"))
        #expect(try c.versionVector()[skewed] == 1)
    }

    /// Coverage claimed in several batches while an origin is held chains up, and a claim
    /// that leaves a gap is not taken.
    @Test func coverageClaimedWhileHeldChainsAndWaitsForTheLastHeldChange() throws {
        let b = try makeStore(dir, "b", clock: clock, id: 0xB)
        let skewed = ReplicaID(rawValue: 0xC)
        func change(_ seq: UInt64, aheadMinutes: Int64) -> Change {
            Change(
                origin: skewed, seq: seq, hlc: HybridTimestamp(milliseconds: clock.now + aheadMinutes * 60_000),
                member: nil, entity: .shoppingItem, rowID: "r\(seq)",
                fields: shoppingItem("Item \(seq)").map { FieldWrite(field: $0.key, value: $0.value) })
        }
        try b.apply(
            DeltaBatch(
                changes: [change(1, aheadMinutes: 12), change(2, aheadMinutes: 0)],
                coverage: [Coverage(origin: skewed, after: 0, upTo: 2)]))
        try b.apply(DeltaBatch(changes: [change(3, aheadMinutes: 14)], coverage: [Coverage(origin: skewed, after: 2, upTo: 3)]))
        try b.apply(DeltaBatch(changes: [change(9, aheadMinutes: 0)], coverage: [Coverage(origin: skewed, after: 5, upTo: 9)]))
        #expect(try b.versionVector()[skewed] == 0)
        clock.advance(2 * 60_000 + 1) // seq 1 is due, seq 3 still held
        #expect(try b.releaseHeldChanges()?.applied.map(\.seq) == [1])
        #expect(try b.versionVector()[skewed] == 0)
        clock.advance(2 * 60_000)
        #expect(try b.releaseHeldChanges()?.applied.map(\.seq) == [3])
        #expect(try b.versionVector()[skewed] == 3) // not 9: 4…5 never arrived
    }

    /// Held changes are durable: they survive a restart of the store.
    @Test func heldChangesSurviveAReopen() throws {
        let path = dir.path("held.sqlite")
        let future = Change(
            origin: ReplicaID(rawValue: 0xC), seq: 1, hlc: HybridTimestamp(milliseconds: clock.now + 3_600_000),
            member: "m1", entity: .task, rowID: "t",
            fields: [
                FieldWrite(
                    field: "title", value: .text("Later"),
                    base: Stamp(hlc: HybridTimestamp(milliseconds: 5), origin: ReplicaID(rawValue: 0xD)))
            ])
        do { _ = try ReplicaStore(path: path, physicalClock: clock.function).apply(DeltaBatch(changes: [future])) }
        clock.advance(3_600_000)
        let reopened = try ReplicaStore(path: path, physicalClock: clock.function)
        #expect(try reopened.releaseHeldChanges()?.applied == [future]) // every field, base and member kept
    }
}
