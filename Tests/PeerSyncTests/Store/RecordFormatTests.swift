import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore

/// Record format 2 and migration 8.
@Suite struct RecordFormatTests {
    let dir: TemporaryDirectory
    let clock = ManualClock()
    init() throws { dir = try TemporaryDirectory() }

    /// Every record of a store, by table and row id.
    func records(_ store: ReplicaStore) throws -> [String: [UInt8]] {
        var all: [String: [UInt8]] = [:]
        for entity in EntityKind.allCases {
            try store.connection.query("SELECT id, versions FROM \(entity.rawValue)") { statement in
                while try statement.step() { all["\(entity.rawValue)/\(statement.text(0))"] = statement.withBlob(1) { Array($0) } }
            }
        }
        try store.connection.query("SELECT entity, row_id, versions FROM partial_row") { statement in
            while try statement.step() { all["partial/\(statement.text(0))/\(statement.text(1))"] = statement.withBlob(2) { Array($0) } }
        }
        return all
    }

    /// A database of schema 7 (records in format 1, as pulse-peer wrote them before) opens
    /// migrated: every record in format 2, every field version the same, smaller; it syncs.
    @Test func migration8RewritesEveryRecordAndKeepsEveryVersion() throws {
        let path = dir.path("v7.sqlite")
        let peer = try makeStore(dir, "peer", clock: clock, id: 0xB)
        var before: [String: VersionedRow] = [:]
        var sizeBefore = 0
        do {
            let store = try makeStore(dir, "v7", clock: clock, id: 0xA)
            let member = RowIDRules.random()
            try store.write(member: member) { tx in
                for i in 0..<300 { _ = try tx.create(.shoppingItem, RowIDRules.random(), shoppingItem("Item \(i)")) }
                _ = try tx.put(
                    .task, "t1",
                    [
                        "title": .text("Water plants"), "done": .bool(false), "assignee": .text(member),
                        "due": .text("2026-11-25"), "created": .integer(5), "template": .null,
                        "period": .null, "deleted": .bool(false),
                    ])
            }
            try store.write(member: "anna") { tx in _ = try tx.put(.task, "t1", ["done": .bool(true)]) } // a base stamp
            // A partial row: a change of the peer whose row's creation has not arrived.
            try peer.write(member: nil) { tx in _ = try tx.put(.shoppingItem, "p1", shoppingItem("Paint")) }
            let (_, update) = try peer.write(member: nil) { tx in _ = try tx.put(.shoppingItem, "p1", ["state": .text("restock")]) }
            try store.apply(DeltaBatch(changes: update))
            // Back to format 1 and schema 7, as the previous version left it.
            for entity in EntityKind.allCases {
                let ids = try store.connection.query("SELECT id FROM \(entity.rawValue)") { statement in
                    var ids: [String] = []
                    while try statement.step() { ids.append(statement.text(0)) }
                    return ids
                }
                for id in ids {
                    let versions = try store.versions(entity, id)
                    before["\(entity.rawValue)/\(id)"] = versions
                    let statement = try store.connection.statement("UPDATE \(entity.rawValue) SET versions = ?2 WHERE id = ?1")
                    try statement.bind(.text(id), at: 1)
                    try statement.bind(blob: Format1.encode(versions), at: 2)
                    while try statement.step() {}
                    statement.reset()
                }
            }
            let partial = try store.versions(.shoppingItem, "p1")
            #expect(partial.byName.keys.sorted() == ["state"])
            before["partial/p1"] = partial
            let statement = try store.connection.statement("UPDATE partial_row SET versions = ?1 WHERE row_id = 'p1'")
            try statement.bind(blob: Format1.encode(partial), at: 1)
            while try statement.step() {}
            statement.reset()
            sizeBefore = try records(store).values.reduce(0) { $0 + $1.count }
            try store.connection.execute(
                MigrationTests.undoMigration23 + MigrationTests.undoMigration11 + MigrationTests.undoMigration9 + "PRAGMA user_version = 7")
        }
        let store = try ReplicaStore(path: path, physicalClock: clock.function)
        #expect(try store.connection.scalarInt("PRAGMA user_version") == Int64(Migrations.latest))
        let after = try records(store)
        #expect(after.count == before.count)
        #expect(after.values.allSatisfy { $0.first == RowVersions.format })
        let sizeAfter = after.values.reduce(0) { $0 + $1.count }
        #expect(sizeAfter * 2 < sizeBefore, "\(sizeBefore) → \(sizeAfter) bytes")
        for (key, versions) in before {
            let parts = key.split(separator: "/").map(String.init)
            let entity = parts[0] == "partial" ? EntityKind.shoppingItem : EntityKind(rawValue: parts[0])!
            #expect(try store.versions(entity, parts[1]) == versions, "\(key)")
        }
        #expect(try store.integrityCheck() == "ok")
        // It syncs both ways with a peer on the new format: the partial row completes.
        try peer.sync(to: store)
        try store.sync(to: peer)
        #expect(try store.canonicalState() == peer.canonicalState())
        #expect(try store.row(.shoppingItem, "p1")["state"] == .text("restock"))
        #expect(try records(store).values.allSatisfy { $0.first == RowVersions.format })
    }

    /// A value is left to its typed column only where the column's declared type gives it
    /// back unchanged: the tables' declared types agree with ``RowVersions/storedExactly``.
    @Test func theColumnsDeclaredTypesKeepTheValuesTheRecordLeavesOut() throws {
        let store = try makeStore(dir, "types", clock: clock, id: 0xA)
        for entity in EntityKind.allCases {
            let declared: [String: String] = try store.connection.query("PRAGMA table_info(\(entity.rawValue))") { statement in
                var types: [String: String] = [:]
                while try statement.step() { types[statement.text(1)] = statement.text(2) }
                return types
            }
            for spec in entity.schema.fields {
                let type = try #require(declared[spec.name], "\(entity.rawValue).\(spec.name)")
                #expect(RowVersions.storedExactly(spec.type, .text("x")) == (type == "TEXT"), "\(entity.rawValue).\(spec.name) \(type)")
                #expect(RowVersions.storedExactly(spec.type, .integer(1)) == (type == "INTEGER"), "\(entity.rawValue).\(spec.name) \(type)")
            }
        }
    }
}

/// Format 1 of ``RowVersions``, as pulse-peer wrote it up to schema 7 (the tests make old
/// databases with it).
enum Format1 {
    static func encode(_ row: VersionedRow) -> [UInt8] {
        let fields = row.byName
        var out: [UInt8] = [1]
        struct Origin: Equatable { let stamp: Stamp; let seq: UInt64; let member: String? }
        let names = fields.keys.sorted()
        var origins: [Origin] = [], indexes: [Int] = []
        for name in names {
            let v = fields[name]!
            let origin = Origin(stamp: v.stamp, seq: v.seq, member: v.member)
            if let index = origins.firstIndex(of: origin) { indexes.append(index) } else { indexes.append(origins.count); origins.append(origin) }
        }
        func fixed(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        func text(_ text: String) { Varint.append(UInt64(text.utf8.count), to: &out); out.append(contentsOf: text.utf8) }
        Varint.append(UInt64(origins.count), to: &out)
        for origin in origins {
            fixed(UInt64(bitPattern: origin.stamp.hlc.rawValue)); fixed(UInt64(bitPattern: origin.stamp.origin.storage))
            Varint.append(origin.seq, to: &out)
            out.append(origin.member == nil ? 0 : 1)
            if let member = origin.member { text(member) }
        }
        Varint.append(UInt64(names.count), to: &out)
        for (name, index) in zip(names, indexes) {
            let v = fields[name]!
            text(name)
            Varint.append(UInt64(index), to: &out)
            switch v.value {
            case .null: out.append(0)
            case let .integer(value): out.append(1); fixed(UInt64(bitPattern: value))
            case let .text(value): out.append(2); text(value)
            }
            out.append(v.base == nil ? 0 : 1)
            if let base = v.base { fixed(UInt64(bitPattern: base.hlc.rawValue)); fixed(UInt64(bitPattern: base.origin.storage)) }
        }
        return out
    }
}
