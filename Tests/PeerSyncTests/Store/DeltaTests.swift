import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore

/// Deltas between version vectors, and replicas wiped or fresh.
@Suite struct DeltaTests: StoreFixture {
    let dir: TemporaryDirectory
    let clock = ManualClock()

    init() throws { dir = try TemporaryDirectory() }

    @Test func deltaIsEmptyOnceInSyncWhateverTheSize() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<3000 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        try b.write(member: nil) { tx in
            for i in 0..<500 { try tx.put(.backlogCategory, "c\(i)", ["title": .text("C\(i)"), "position": .integer(Int64(i)), "deleted": .bool(false)]) }
        }
        try a.sync(to: b, batchLimit: 256)
        try b.sync(to: a, batchLimit: 256)
        #expect(try a.versionVector() == b.versionVector())
        #expect(try a.allDeltas(for: b.versionVector()).isEmpty)
        #expect(try b.allDeltas(for: a.versionVector()).isEmpty)
        #expect(try a.deltas(for: b.versionVector()).lagCount == 0)
    }

    @Test func batchesAreBoundedAndCarryWholeChanges() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<100 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        let batches = try a.allDeltas(for: VersionVector(), batchLimit: 7)
        #expect(batches.count == 15)
        for batch in batches {
            #expect(batch.changes.count <= 7)
            #expect(batch.changes.allSatisfy { $0.fields.count == 3 })
        }
        for batch in batches { try b.apply(batch) }
        #expect(try b.canonicalState() == a.canonicalState())
    }

    @Test func supersededChangesAreNotResentButTheirNumbersAreCovered() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        for n in 0..<50 {
            clock.advance(1)
            try a.write(member: nil) { try $0.put(.shoppingItem, "i1", ["name": .text("Milk \(n)")]) }
        }
        let batches = try a.allDeltas(for: VersionVector())
        #expect(batches.flatMap(\.changes).count == 2) // the create's other fields, the last rename
        // The index keeps only changes that still hold a field.
        #expect(try a.connection.scalarInt("SELECT count(*) FROM change_index") == 2)
        for batch in batches { try b.apply(batch) }
        #expect(try b.versionVector()[a.replicaID] == 51)
        #expect(try b.value(.shoppingItem, "i1", "name") == .text("Milk 49"))
    }

    @Test func theSnapshotIgnoresWritesMadeWhileStreaming() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<10 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        let cursor = try a.deltas(for: VersionVector(), batchLimit: 4)
        let first = try #require(try cursor.next())
        try a.write(member: nil) { try $0.put(.shoppingItem, "late", shoppingItem("Late")) } // not blocked by the reader
        var rest: [DeltaBatch] = []
        while let batch = try cursor.next() { rest.append(batch) }
        #expect(cursor.snapshotVector[a.replicaID] == 10)
        for batch in [first] + rest { try b.apply(batch) }
        #expect(try b.versionVector()[a.replicaID] == 10)
        #expect(try b.value(.shoppingItem, "late", "name") == nil)
    }

    @Test func ownChangesAreThisReplicasAfterANumberAndLeaveTheConnectionFreeToWrite() throws {
        let (a, b) = try pair()
        for name in ["Milk", "Eggs", "Bread"] {
            clock.advance(1)
            try a.write(member: nil) { try $0.put(.shoppingItem, name, shoppingItem(name)) }
        }
        try b.write(member: nil) { try $0.put(.shoppingItem, "Tea", shoppingItem("Tea")) }
        try b.sync(to: a) // another replica's change, numbered after a's own
        let (changes, upTo) = try a.ownChanges(after: 1)
        #expect(changes.map(\.seq) == [2, 3])
        #expect(changes.allSatisfy { $0.origin == a.replicaID })
        #expect(upTo == 3)
        #expect(try a.ownChanges(after: 3).changes.isEmpty)
        #expect(try a.ownChanges(after: 3).upTo == 3)
        // Read in a transaction of its own, on the store's connection, and ended: a write goes on.
        #expect(!a.connection.isInTransaction)
        try a.write(member: nil) { try $0.put(.shoppingItem, "Jam", shoppingItem("Jam")) }
        #expect(try a.ownChanges(after: 3).changes.map(\.seq) == [4])
    }

    // Wiped and fresh replicas

    @Test func aFreshReplicaLearnsAndErasesNothing() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<30 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        try a.sync(to: b)
        // B's database is wiped: a new database, a new replica id.
        let wiped = try makeStore(dir, "b-again", clock: clock, id: 0xB2)
        try wiped.sync(to: a) // it has nothing to send...
        try a.sync(to: wiped) // ...and learns everything
        #expect(try a.canonicalState() == b.canonicalState())
        #expect(try wiped.canonicalState() == a.canonicalState())
        // Its new writes are numbered afresh and not mistaken for B's old ones.
        try wiped.write(member: nil) { try $0.put(.shoppingItem, "new", shoppingItem("Bread")) }
        try wiped.sync(to: a)
        #expect(try a.value(.shoppingItem, "new", "name") == .text("Bread"))
    }
}
