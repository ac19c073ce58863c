import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore

/// The merge rules as the store applies them: field by field, tombstones, conflicts logged.
@Suite struct StoreMergeTests: StoreFixture {
    let dir: TemporaryDirectory
    let clock = ManualClock()

    init() throws { dir = try TemporaryDirectory() }

    @Test func aRowWaitsInPartialRowUntilItsLastFieldArrives() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.write(member: nil) { try $0.put(.shoppingItem, "i1", ["name": .text("Oat milk")]) }
        let changes = try a.allDeltas(for: VersionVector()).flatMap(\.changes)
        // The rename arrives first (as it can, relayed by another machine): a partial row.
        try b.apply(DeltaBatch(changes: [changes[1]]))
        #expect(try b.connection.scalarInt("SELECT count(*) FROM shopping_item") == 0)
        #expect(try b.connection.scalarInt("SELECT count(*) FROM partial_row") == 1)
        #expect(try b.row(.shoppingItem, "i1") == ["name": .text("Oat milk")])
        // The creation completes it: one typed row, nothing left waiting, same state as A.
        try b.apply(DeltaBatch(changes: [changes[0]], coverage: [Coverage(origin: a.replicaID, after: 0, upTo: 2)]))
        #expect(try b.connection.scalarInt("SELECT count(*) FROM partial_row") == 0)
        #expect(try b.connection.query("SELECT name FROM shopping_item WHERE id = 'i1'") { try $0.step() ? $0.text(0) : nil } == "Oat milk")
        #expect(try b.canonicalState() == (try a.canonicalState()))
        // And B can serve both changes to a third replica from its own tables.
        #expect(try b.allDeltas(for: VersionVector()).flatMap(\.changes).count == 2)
    }

    @Test func createMakesARowWithoutReadingAndNeverOverwrites() throws {
        let (a, b) = try pair()
        try a.write(member: "anna") { try $0.create(.shoppingItem, "i1", shoppingItem("Milk")) }
        #expect(try a.row(.shoppingItem, "i1") == shoppingItem("Milk"))
        // Replicates like any other change: one change with every field.
        for batch in try a.allDeltas(for: b.versionVector()) { try b.apply(batch) }
        #expect(try b.canonicalState() == (try a.canonicalState()))
        // An id that exists after all: refused on the primary key, the transaction rolls
        // back, and nothing of the row, the index or the version vector moves.
        let vector = try a.versionVector()
        #expect(throws: StoreError.self) {
            try a.write(member: "tom") { tx in
                try tx.put(.shoppingItem, "i2", shoppingItem("Bread"))
                try tx.create(.shoppingItem, "i1", shoppingItem("Eggs"))
            }
        }
        #expect(try a.row(.shoppingItem, "i1") == shoppingItem("Milk"))
        #expect(try a.row(.shoppingItem, "i2").isEmpty)
        #expect(try a.versionVector() == vector)
        #expect(try a.allDeltas(for: VersionVector()).flatMap(\.changes).count == 1)
    }

    /// New rows and index entries are held and made by multi-row inserts (HeldInserts.swift);
    /// every statement after them must still see them: a read of a held row, a rename of
    /// one, a write that supersedes a held row's every field (its index entry leaves).
    @Test func heldInsertsAreSeenByEveryLaterStatement() throws {
        let (a, b) = try pair()
        let count = HeldInserts.chunk * 2 + HeldInserts.smallChunk + 3 // every statement size
        try a.write(member: "anna") { tx in
            for i in 0..<count { try tx.create(.shoppingItem, "n\(i)", shoppingItem("Item \(i)")) }
            // A row and an index entry each, made a full chunk of each at a time: the last
            // ones are still held.
            #expect(a.connection.held.count == (count * 2) % HeldInserts.flushAt && a.connection.held.count > 0)
            #expect(try a.row(.shoppingItem, "n\(count - 1)") == shoppingItem("Item \(count - 1)")) // held until this read
            #expect(a.connection.held.count == 0)
            #expect(try a.row(.shoppingItem, "n5") == shoppingItem("Item 5")) // made with the first chunk
            for i in count..<count + 3 { try tx.create(.shoppingItem, "n\(i)", shoppingItem("Item \(i)")) }
            try tx.put(.shoppingItem, "n\(count + 1)", ["name": .text("Renamed")])
            try tx.create(.shoppingItem, "m", shoppingItem("Held"))
            try tx.put(.shoppingItem, "m", shoppingItem("Replaced", listed: 2))
        }
        #expect(a.connection.held.count == 0)
        #expect(try a.connection.scalarInt("SELECT count(*) FROM shopping_item") == Int64(count + 4))
        #expect(try a.row(.shoppingItem, "n\(count + 1)")["name"] == .text("Renamed"))
        #expect(try a.row(.shoppingItem, "m") == shoppingItem("Replaced", listed: 2))
        // Every create, the rename and the replacement; not the create of "m", superseded whole.
        #expect(try a.connection.scalarInt("SELECT count(*) FROM change_index") == Int64(count + 3 + 1 + 1))
        #expect(try a.versionVector()[a.replicaID] == UInt64(count + 3 + 3))
        // The other side applies them through the same held inserts, and serves them again.
        for batch in try a.allDeltas(for: b.versionVector()) { try b.apply(batch) }
        #expect(try b.canonicalState() == (try a.canonicalState()))
        #expect(try b.connection.scalarInt("SELECT count(*) FROM change_index") == Int64(count + 5))
        #expect(try b.allDeltas(for: VersionVector()).flatMap(\.changes).count == count + 5)
        #expect(try a.integrityCheck() == "ok" && (try b.integrityCheck()) == "ok")
    }

    /// A row whose id sorts after every id of its table is taken as new without a read; one
    /// that sorts before, or equal to, the last is read first, and merges with what is there.
    @Test func onlyRowsAfterTheLastIDAreTakenAsNewUnread() throws {
        let (a, b) = try pair()
        try b.write(member: nil) { tx in
            try tx.put(.shoppingItem, "k5", shoppingItem("B's five", listed: 5))
            try tx.put(.shoppingItem, "k3", shoppingItem("B's three", listed: 3))
        }
        clock.advance(10)
        try a.write(member: nil) { tx in
            for id in ["k1", "k5", "k50", "k9", "k3"] { try tx.put(.shoppingItem, id, shoppingItem("A's \(id)", listed: 9)) }
        }
        let outcome = try b.apply(try #require(try a.allDeltas(for: b.versionVector()).first))
        #expect(outcome.applied.count == 5)
        // k5 (the last id) and k3 were B's, read, and A's later write won every field, each loss
        // logged; k1 was read and absent; k50 and k9 sort after k5: new, unread.
        #expect(try b.row(.shoppingItem, "k5") == shoppingItem("A's k5", listed: 9))
        #expect(try b.conflicts().count == 2 * 2) // name and listed of k5 and of k3
        try b.sync(to: a)
        #expect(try a.canonicalState() == (try b.canonicalState()))
        #expect(try b.connection.scalarInt("SELECT count(*) FROM shopping_item") == 5)
        // The same batch again: every row is there now, nothing is new.
        #expect(try b.apply(try #require(try a.allDeltas(for: VersionVector()).first)).applied.isEmpty)
    }

    /// A held row refused inside a chunk is named (the chunk is rerun row by row), and the
    /// transaction leaves nothing, as when each insert ran at once.
    @Test func aHeldRowRefusedInsideAChunkIsNamedAndNothingIsWritten() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.create(.shoppingItem, "taken", shoppingItem("First")) }
        let vector = try a.versionVector(), state = try a.canonicalState()
        for position in [3, 70, HeldInserts.chunk + HeldInserts.smallChunk + 1] { // in a chunk, a small chunk, alone
            do {
                try a.write(member: nil) { tx in
                    for i in 0..<(HeldInserts.chunk + HeldInserts.smallChunk + 2) {
                        try tx.create(.shoppingItem, i == position ? "taken" : "n\(i)", shoppingItem("Item \(i)"))
                    }
                }
                Issue.record("a row id already taken was accepted at \(position)")
            } catch let StoreError.constraint(entity, rowID, _) {
                #expect(entity == .shoppingItem && rowID == "taken")
            }
            #expect(a.connection.held.count == 0)
            #expect(try a.versionVector() == vector)
            #expect(try a.canonicalState() == state)
            #expect(try a.connection.scalarInt("SELECT count(*) FROM change_index") == 1)
        }
        // A batch that names one change on two rows (forged) is refused whole, naming the second.
        try a.write(member: nil) { tx in for i in 0..<3 { try tx.create(.shoppingItem, "f\(i)", shoppingItem("F\(i)")) } }
        let changes = try a.allDeltas(for: VersionVector()).flatMap(\.changes)
        let forged = Change(
            origin: changes[2].origin, seq: changes[1].seq, hlc: changes[2].hlc, member: nil,
            entity: .shoppingItem, rowID: changes[2].rowID, fields: changes[2].fields)
        do {
            try b.apply(DeltaBatch(changes: [changes[0], changes[1], forged]))
            Issue.record("one change on two rows was accepted")
        } catch let StoreError.constraint(_, rowID, _) {
            #expect(rowID == changes[2].rowID)
        }
        #expect(try b.canonicalState().isEmpty && (try b.versionVector()).isEmpty)
    }

    /// Local writes inside ``ReplicaStore/atomically(_:)`` are one transaction: all kept, or none
    /// when it throws; a write that fails inside it undoes its own rows alone (a savepoint),
    /// held inserts included, and the ones before and after it stay.
    @Test func writesMadeAtomicallyAreKeptAllTogetherOrNotAtAll() throws {
        let (a, _) = try pair()
        let vector = try a.versionVector(), state = try a.canonicalState()
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try a.atomically {
                try a.write(member: nil) { try $0.create(.shoppingItem, "one", shoppingItem("One")) }
                try a.write(member: nil) { try $0.create(.shoppingItem, "two", shoppingItem("Two")) }
                throw Refused()
            }
        }
        #expect(try a.versionVector() == vector && a.canonicalState() == state && a.connection.held.count == 0)
        try a.atomically {
            try a.write(member: nil) { try $0.create(.shoppingItem, "one", shoppingItem("One")) }
            // A failure after held inserts of its own: those go, "one" stays.
            _ = try? a.write(member: nil) { tx in
                for i in 0..<3 { try tx.create(.shoppingItem, "held\(i)", shoppingItem("Held \(i)")) }
                try tx.create(.shoppingItem, "one", shoppingItem("Again"))
            }
            try a.write(member: nil) { try $0.create(.shoppingItem, "two", shoppingItem("Two")) }
        }
        #expect(try a.connection.scalarInt("SELECT count(*) FROM shopping_item") == 2)
        #expect(try a.row(.shoppingItem, "one")["name"] == .text("One") && a.row(.shoppingItem, "held0").isEmpty)
        #expect(try a.allDeltas(for: VersionVector()).flatMap(\.changes).count == 2)
        #expect(!a.connection.isInTransaction)
    }

    /// Held rows bind their text and blobs in place (one room per statement): every value
    /// of a chunk, a small chunk and single rows comes back as written, whatever its length
    /// and bytes, and a peer syncing them gets the same rows (the index's row ids too, as
    /// 16 bytes for a UUID and as text for any other id).
    @Test func heldRowsBoundInPlaceComeBackAsWritten() throws {
        let (a, b) = try pair()
        let count = HeldInserts.chunk + HeldInserts.smallChunk + 3
        let names = (0..<count).map { i in
            [String(repeating: "x", count: 1 + i % 200), "Crème brûlée \(i)", "🥛 \(i)", "Ä"][i % 4]
        }
        let ids = (0..<count).map { $0.isMultiple(of: 3) ? "plain-\($0)" : RowIDRules.newRowID() }
        try a.write(member: "anna") { tx in
            for (id, name) in zip(ids, names) { try tx.create(.shoppingItem, id, shoppingItem(name)) }
        }
        let rows = try a.canonicalState()[.shoppingItem] ?? [:]
        #expect(rows.count == count)
        for (id, name) in zip(ids, names) { #expect(rows[id]?["name"] == .text(name), "\(id)") }
        for batch in try a.allDeltas(for: VersionVector()) { try b.apply(batch) }
        #expect(try b.canonicalState() == a.canonicalState())
        #expect(Set(try a.allDeltas(for: VersionVector()).flatMap(\.changes).map(\.rowID)) == Set(ids))
    }

    @Test func concurrentEditsOfDifferentFieldsBothSurvive() throws {
        let (a, b) = try pair()
        try a.write(member: "anna") {
            try $0.put(
                .task, "t1",
                [
                    "title": .text("Paint fence"), "done": .bool(false), "assignee": .null, "due": .null,
                    "created": .integer(1), "template": .null, "period": .null, "deleted": .bool(false),
                ])
        }
        try a.sync(to: b)
        clock.advance(10)
        try a.write(member: "anna") { try $0.put(.task, "t1", ["title": .text("Paint the fence")]) }
        try b.write(member: "tom") { try $0.put(.task, "t1", ["due": .text("2026-11-22")]) }
        try a.sync(to: b)
        try b.sync(to: a)
        for store in [a, b] {
            #expect(try store.value(.task, "t1", "title") == .text("Paint the fence"))
            #expect(try store.value(.task, "t1", "due") == .text("2026-11-22"))
            #expect(try store.conflicts().isEmpty)
        }
    }

    @Test func sameFieldResolvesToOneWinnerEverywhereAndIsLoggedOnBothSides() throws {
        let (a, b) = try pair()
        try a.write(member: "anna") { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.sync(to: b)
        clock.advance(5)
        try a.write(member: "anna") { try $0.put(.shoppingItem, "i1", ["name": .text("Oat milk")]) }
        try b.write(member: "tom") { try $0.put(.shoppingItem, "i1", ["name": .text("Whole milk")]) }
        // Same physical millisecond on both machines: the tie is broken by replica id (B > A).
        try a.sync(to: b)
        try b.sync(to: a)
        #expect(try a.value(.shoppingItem, "i1", "name") == .text("Whole milk"))
        #expect(try b.value(.shoppingItem, "i1", "name") == .text("Whole milk"))

        let onA = try a.conflicts()
        #expect(onA.count == 1)
        #expect(onA[0].kind == .overwritten)
        #expect(onA[0].lost.value == .text("Oat milk") && onA[0].lost.member == "anna")
        #expect(onA[0].kept.value == .text("Whole milk") && onA[0].kept.member == "tom")
        let onB = try b.conflicts()
        #expect(onB.count == 1)
        #expect(onB[0].kind == .rejected)
        #expect(onB[0].lost.value == .text("Oat milk"))
        #expect(onB[0].kept.value == .text("Whole milk"))
    }

    @Test func laterEditOfASeenValueIsNoConflict() throws {
        let (a, b) = try pair()
        try a.write(member: "anna") { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.sync(to: b)
        clock.advance(5)
        try b.write(member: "tom") { try $0.put(.shoppingItem, "i1", ["name": .text("Milk 2L")]) }
        try b.sync(to: a)
        #expect(try a.value(.shoppingItem, "i1", "name") == .text("Milk 2L"))
        #expect(try a.conflicts().isEmpty)
        #expect(try b.conflicts().isEmpty)
    }

    @Test func editVersusDeleteKeepsTheRowDeletedAndLogsTheEditOnBothSides() throws {
        let (a, b) = try pair()
        let fields: [String: FieldValue] = ["title": .text("Plan trip"), "category": .text("c1"), "created": .integer(1), "deleted": .bool(false)]
        try a.write(member: "anna") { try $0.put(.backlogItem, "x1", RowFields(fields)) }
        try a.sync(to: b)
        clock.advance(5)
        try a.write(member: "anna") { try $0.put(.backlogItem, "x1", ["deleted": .bool(true)]) }
        clock.advance(5)
        try b.write(member: "tom") { try $0.put(.backlogItem, "x1", ["title": .text("Plan trip to Rome")]) }
        try a.sync(to: b)
        try b.sync(to: a)
        for store in [a, b] {
            #expect(try store.value(.backlogItem, "x1", "deleted") == .bool(true))
            #expect(try store.value(.backlogItem, "x1", "title") == .text("Plan trip to Rome")) // kept, restorable
            let log = try store.conflicts()
            #expect(log.count == 1)
            #expect(log.first?.kind == .editOfDeleted)
            #expect(log.first?.lost.value == .text("Plan trip to Rome"))
        }
        #expect(try a.canonicalState() == b.canonicalState())
    }

    @Test func applyingTheSameBatchTwiceChangesNothing() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<20 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        let batches = try a.allDeltas(for: VersionVector())
        let first = try b.apply(batches[0])
        #expect(first.applied.count == 20)
        let state = try b.canonicalState(), vector = try b.versionVector()
        let second = try b.apply(batches[0])
        #expect(second.applied.isEmpty && second.ignored == 20)
        #expect(try b.canonicalState() == state)
        #expect(try b.versionVector() == vector)
    }

    @Test func aBatchAfterAGapAppliesItsChangesButDoesNotClaimTheGap() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<10 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        let batches = try a.allDeltas(for: VersionVector(), batchLimit: 4)
        #expect(batches.count == 3)
        try b.apply(batches[2]) // out of order: changes 9...10
        #expect(try b.value(.shoppingItem, "i9", "name") == .text("Item 9"))
        #expect(try b.versionVector()[a.replicaID] == 0) // 1...8 still missing
        try b.apply(batches[0])
        #expect(try b.versionVector()[a.replicaID] == 4)
        try b.apply(batches[1])
        #expect(try b.versionVector()[a.replicaID] == 8)
        try a.sync(to: b) // asks again from 8
        #expect(try b.versionVector() == a.versionVector())
        #expect(try b.canonicalState() == a.canonicalState())
    }
}
