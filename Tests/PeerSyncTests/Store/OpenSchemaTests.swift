import Foundation
import NIOCore
import Testing
@testable import PulseModel
@testable import PulseProtocol
@testable import PulseStore

/// The open schema (PROTOCOL.md §7, PulseStore/KeptChanges.swift): what a later release writes
/// — an entity this one does not know, a field it does not know — is kept with its stamps,
/// counted, relayed as it came, never shown, and made live by a release that knows it.
@Suite struct OpenSchemaTests {
    let dir: TemporaryDirectory
    let clock = ManualClock()
    /// The later release's machine.
    static let later = ReplicaID(rawValue: 0xC)

    init() throws { dir = try TemporaryDirectory() }

    func at(_ offset: Int64) -> HybridTimestamp { HybridTimestamp(milliseconds: clock.now - 10_000 + offset) }

    /// What a later release sends: a shopping item with a `brand` (a field this release
    /// lacks), a row of entity 200 (`note`), and the item's brand changed later.
    func laterBatch() -> DeltaBatch {
        let o = Self.later
        return DeltaBatch(
            changes: [
                Change(
                    origin: o, seq: 1, hlc: at(1), member: "anna", entity: .shoppingItem, rowID: "s1",
                    fields: [
                        FieldWrite(field: "brand", value: .text("Acme kg")), FieldWrite(field: "listed", value: .integer(1)),
                        FieldWrite(field: "name", value: .text("Flour")), FieldWrite(field: "state", value: .text("active")),
                    ]),
                Change(
                    origin: o, seq: 3, hlc: at(3), member: "tom", entity: .shoppingItem, rowID: "s1",
                    fields: [FieldWrite(field: "brand", value: .text("Bolt kg"), base: Stamp(hlc: at(1), origin: o))]),
            ],
            coverage: [Coverage(origin: o, after: 0, upTo: 3)],
            kept: [
                KeptChange(
                    origin: o, seq: 2, hlc: at(2), member: "anna", code: 200, rowID: "n1",
                    fields: [FieldWrite(field: "done", value: .integer(0)), FieldWrite(field: "title", value: .text("Call the plumber"))])
            ])
    }

    /// Every batch `store` sends a peer that has nothing, through the wire's encoding.
    func relayed(_ store: ReplicaStore, batchLimit: Int = 1000) throws -> [DeltaBatch] {
        try store.allDeltas(for: VersionVector(), batchLimit: batchLimit).map { batch in
            var buffer = ByteBuffer()
            WireCodec.encode(.batch(batch), into: &buffer)
            guard case let .batch(decoded) = try WireCodec.decode(&buffer) else { throw WireError("not a batch") }
            #expect(decoded == batch)
            return decoded
        }
    }

    @Test func aLaterReleasesEntityAndFieldAreKeptCountedRelayedAndNeverShown() throws {
        let b = try makeStore(dir, "b", clock: clock, id: 0xB)
        let outcome = try b.apply(laterBatch())
        #expect(outcome.kept == 2) // the note and the item's last brand (the first one was overwritten in the same batch)
        #expect(try b.versionVector()[Self.later] == 3, "counted as any change")
        // Shown: the item as this release knows it; nothing of the brand or the note.
        #expect(try b.canonicalState()[.shoppingItem]?["s1"] == ["name": .text("Flour"), "state": .text("active"), "listed": .integer(1)])
        let export = String(describing: try b.canonicalState()) // what the export and the pages read
        #expect(!export.contains("kg") && !export.contains("plumber") && !export.contains("brand"))
        #expect(outcome.applied.map(\.fields.count) == [3], "events see the known fields only")
        // Kept: per field, the last writer wins (the first brand was overwritten).
        let kept = try b.keptChanges()
        #expect(kept.map(\.seq) == [2, 3])
        #expect(kept.first { $0.seq == 3 }?.fields == [FieldWrite(field: "brand", value: .text("Bolt kg"), base: Stamp(hlc: at(1), origin: Self.later))])
        // Relayed, a batch at a time or all at once: C gets what B keeps, as B got it.
        for limit in [1, 2, 1000] {
            let c = try makeStore(dir, "c\(limit)", clock: clock, id: 0xD)
            let batches = try relayed(b, batchLimit: limit)
            for batch in batches { try c.apply(batch) }
            #expect(try c.versionVector()[Self.later] == 3, "batches of \(limit)")
            #expect(try c.keptChanges() == b.keptChanges(), "batches of \(limit)")
            #expect(try c.canonicalState() == b.canonicalState(), "batches of \(limit)")
            let sent = batches.flatMap(\.changes)
            #expect(sent.first { $0.seq == 3 }?.fields.map(\.field) == ["brand"], "a kept field alone travels as the item's change")
            #expect(batches.flatMap(\.kept).map(\.code) == [200])
        }
        // Arriving again changes nothing.
        #expect(try b.apply(laterBatch()).kept == 0)
        #expect(try b.keptChanges() == kept)
    }

    @Test func whatWasKeptBecomesLiveWhenTheReleaseKnowsIt() throws {
        let b = try makeStore(dir, "b", clock: clock, id: 0xB)
        // As an older release kept it: a shopping item (an entity that release did not know)
        // whose change also carries a field this one does not know either.
        try b.connection.transaction {
            try b.keep([
                KeptChange(
                    origin: Self.later, seq: 1, hlc: at(1), member: "anna", code: EntityKind.shoppingItem.code, rowID: "s9",
                    fields: [
                        FieldWrite(field: "brand", value: .text("Acme")), FieldWrite(field: "listed", value: .integer(1)),
                        FieldWrite(field: "name", value: .text("Yeast")), FieldWrite(field: "state", value: .text("active")),
                    ])
            ])
            try b.saveVersion(Self.later, 1)
        }
        #expect(try b.canonicalState()[.shoppingItem]?["s9"] == nil)
        #expect(try b.adoptKnownKeptChanges() == 1)
        #expect(try b.canonicalState()[.shoppingItem]?["s9"]?["name"] == .text("Yeast"))
        #expect(try b.keptChanges().map(\.fields) == [[FieldWrite(field: "brand", value: .text("Acme"))]], "what is still unknown stays")
        #expect(try b.adoptKnownKeptChanges() == 0, "once")
        // And it travels whole again: one change, the item's fields and the kept one.
        let sent = try relayed(b).flatMap(\.changes)
        #expect(sent.map { $0.fields.map(\.field) } == [["brand", "listed", "name", "state"]])
    }

    @Test func beyondTheBoundsOfWhatIsKeptABatchIsRefusedAndChangesNothing() throws {
        let b = try makeStore(dir, "b", clock: clock, id: 0xB)
        func refused(_ batch: DeltaBatch, _ text: String) throws {
            let state = try b.canonicalState(), vector = try b.versionVector()
            #expect { try b.apply(batch) } throws: { String(describing: $0).contains(text) }
            #expect(try b.canonicalState() == state && b.versionVector() == vector && b.keptChanges().isEmpty)
        }
        let good = laterBatch()
        func with(_ kept: KeptChange) -> DeltaBatch { DeltaBatch(changes: good.changes, coverage: good.coverage, kept: [kept]) }
        func note(_ fields: [FieldWrite], row: String = "n1") -> KeptChange {
            KeptChange(origin: Self.later, seq: 2, hlc: at(2), member: nil, code: 200, rowID: row, fields: fields)
        }
        try refused(with(note([FieldWrite(field: "Title", value: .text("x"))])), "a field name is")
        try refused(with(note([FieldWrite(field: String(repeating: "a", count: 65), value: .text("x"))])), "a field name is")
        try refused(with(note([FieldWrite(field: "title", value: .text(String(repeating: "x", count: 4097)))])), "longer than 4096 bytes")
        try refused(with(note([FieldWrite(field: "title", value: .text("a\u{0}b"))])), "U+0000")
        try refused(with(note((0..<17).map { FieldWrite(field: "f\($0)", value: .integer(1)) })), "fields")
        try refused(with(note([FieldWrite(field: "title", value: .null), FieldWrite(field: "title", value: .null)])), "twice")
        try refused(with(note([FieldWrite(field: "title", value: .null)], row: "../x")), "invalid row id")
        try refused(with(note([])), "no field")
        // A known entity's unknown field is held to the same bounds; its known fields to theirs.
        let item = Change(
            origin: Self.later, seq: 1, hlc: at(1), member: nil, entity: .shoppingItem, rowID: "s1",
            fields: [FieldWrite(field: "name", value: .text("Flour")), FieldWrite(field: "Quantity", value: .text("2"))])
        try refused(DeltaBatch(changes: [item], coverage: [Coverage(origin: Self.later, after: 0, upTo: 1)]), "a field name is")
        // A kept change in this machine's own name that it never made.
        let forged = KeptChange(
            origin: b.replicaID, seq: 5, hlc: at(1), member: nil, code: 200, rowID: "n", fields: [FieldWrite(field: "t", value: .integer(1))])
        try refused(DeltaBatch(kept: [forged]), "never made")
    }

    /// `kept_change.fields` as bytes (migration 19): every value type, a base, any text, read
    /// back as written; bytes that are not such a record are refused, never read past.
    @Test func keptFieldsAreStoredAsBytesAndReadBackAsWritten() throws {
        let fields = [
            FieldWrite(field: "title", value: .text("Crème fraîche ✓")), FieldWrite(field: "empty", value: .text("")),
            FieldWrite(field: "n", value: .integer(Int64.min), base: Stamp(hlc: HybridTimestamp(rawValue: Int64.max), origin: ReplicaID(rawValue: .max))),
            FieldWrite(field: "m", value: .integer(-1)), FieldWrite(field: "z", value: .integer(Int64.max)), FieldWrite(field: "gone", value: .null),
        ]
        let bytes = try ReplicaStore.encodeKept(fields)
        #expect(bytes.first == ReplicaStore.keptFormat)
        #expect(try bytes.withUnsafeBytes { try ReplicaStore.decodeKept($0) } == fields)
        for cut in 1..<bytes.count {
            #expect(throws: StoreError.self) { try bytes.prefix(cut).withUnsafeBytes { try ReplicaStore.decodeKept($0) } }
        }
        #expect(throws: StoreError.self) { try (bytes + [0]).withUnsafeBytes { try ReplicaStore.decodeKept($0) } }
    }

    /// A home of release 0.10.0 kept its fields as JSON: migration 19 writes them as bytes, and
    /// what was kept is still relayed and made live as before.
    @Test func keptFieldsRecordedAsJSONBy0_10_0AreRewrittenAsBytes() throws {
        let b = try makeStore(dir, "b", clock: clock, id: 0xB)
        try b.apply(laterBatch())
        let kept = try b.keptChanges()
        #expect(!kept.isEmpty)
        // Back to what 0.10.0 wrote: JSON records, schema 18.
        try b.connection.transaction {
            for change in kept {
                let json = try JSONEncoder().encode(
                    ReplicaStore.KeptFields(
                        fields: change.fields.map {
                            HeldChange.Field(name: $0.field, value: $0.value, baseHLC: $0.base?.hlc.rawValue, baseOrigin: $0.base?.origin.rawValue)
                        }))
                let statement = try b.connection.statement("UPDATE kept_change SET fields = ?3 WHERE origin = ?1 AND seq = ?2")
                try statement.bind(change.origin.storage, at: 1)
                try statement.bind(Int64(change.seq), at: 2)
                try statement.bind(blob: Array(json), at: 3)
                while try statement.step() {}
                statement.reset()
            }
        }
        try b.connection.execute("ALTER TABLE phone DROP COLUMN renewed") // migration 20's
        try b.connection.execute(MigrationTests.undoMigration23 + "PRAGMA user_version = 18")
        #expect(try b.connection.scalarInt("SELECT count(*) FROM kept_change WHERE substr(fields, 1, 1) = X'7B'") == Int64(kept.count))
        let path = b.path
        let reopened = try ReplicaStore(path: path, physicalClock: clock.function)
        #expect(try reopened.connection.scalarInt("PRAGMA user_version") == Int64(Migrations.latest))
        #expect(try reopened.connection.scalarInt("SELECT count(*) FROM kept_change WHERE substr(fields, 1, 1) = X'01'") == Int64(kept.count))
        #expect(try reopened.keptChanges() == kept)
        #expect(try relayed(reopened).flatMap(\.kept) == relayed(b).flatMap(\.kept))
    }
}
