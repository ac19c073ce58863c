import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

// Row storage: a row's versions record and its typed columns, read and written (the
// binding-slot arithmetic of the typed tables lives here, apart from the replication rules).

extension ReplicaStore {

    /// A row during `apply`: as read, as merged so far.
    package struct TouchedRow {
        package let key: RowKey
        package let original: VersionedRow
        package var current: VersionedRow
        package var changed = false
        package init(key: RowKey, _ versions: VersionedRow) {
            self.key = key
            original = versions
            current = versions
        }
    }

    package struct RowKey: Hashable {
        package let entity: EntityKind
        /// The row's id: a UUID's hashes and compares as two words, no string.
        package let id: TextID

        /// The table (top byte), then the first seven bytes of the id's text, big-endian:
        /// ordered as the tables order their rows, for ids that differ in those bytes (a
        /// UUID's are the digits of its first 28 bits, made from its words).
        package var sortPrefix: UInt64 {
            let table = UInt64(entity.ordinal) << 56
            switch id {
            case let .uuid(high, _):
                // Its first eight digits, the first in the top byte, less the eighth.
                return table | Hex.hex8(UInt32(truncatingIfNeeded: high >> 32)).byteSwapped >> 8
            case var .text(text):
                return text.withUTF8 { bytes in
                    var prefix = table, shift: UInt64 = 48
                    for byte in bytes.prefix(7) {
                        prefix |= UInt64(byte) << shift
                        shift &-= 8
                    }
                    return prefix
                }
            }
        }
    }

    /// The largest row id of each typed table, read when first asked (for one transaction:
    /// rows written after the read are not counted).
    struct LastRowIDs {
        private var read = [Bool](repeating: false, count: EntityKind.allCases.count)
        private var last = [TextID?](repeating: nil, count: EntityKind.allCases.count)

        /// Whether `rowID` sorts after every id in `entity`'s table, in SQLite's order for the
        /// ids (BINARY: their bytes), so that the table cannot hold it.
        mutating func sortsAfterEveryRow(_ entity: EntityKind, _ id: TextID, _ connection: Connection) throws -> Bool {
            if !read[entity.ordinal] {
                last[entity.ordinal] = try connection.query("SELECT max(id) FROM \(entity.rawValue)") {
                    try $0.step() ? $0.optionalText(0).map(TextID.init) : nil
                }
                read[entity.ordinal] = true
            }
            guard let last = last[entity.ordinal] else { return true } // an empty table
            // Two UUIDs by their words (their texts order as their values); any other pair
            // by memcmp over the bytes (the generic comparison of two UTF-8 views cost 2 % of
            // the apply), the shorter first when one is a prefix of the other.
            if case let .uuid(lastHigh, lastLow) = last, case let .uuid(high, low) = id {
                return (lastHigh, lastLow) < (high, low)
            }
            return last.withUTF8 { last in
                id.withUTF8 { id in
                    let common = min(last.count, id.count)
                    let order = common == 0 ? 0 : memcmp(last.baseAddress!, id.baseAddress!, common)
                    return order < 0 || (order == 0 && last.count < id.count)
                }
            }
        }
    }

    /// Every field version of one row (empty for a row never written).
    package func versions(_ entity: EntityKind, _ rowID: String) throws -> VersionedRow {
        try versions(entity, TextID(rowID), anyPartial: true)
    }

    /// `anyPartial: false`: `partial_row` is known to be empty (checked in this transaction),
    /// so a row the typed table lacks has no versions and is not looked for there.
    func versions(_ entity: EntityKind, _ id: TextID, anyPartial: Bool) throws -> VersionedRow {
        try Self.readVersions(
            entity, id, typed: rowStatement(entity, .select),
            partial: anyPartial ? hot(.selectPartial) : nil) ?? VersionedRow(entity.schema)
    }

    /// The same read on another connection (a delta reader's), from its cache's fixed slots
    /// (by index: hashing the SQL text on every read cost 6 % of a sending agent).
    final class RecordStatements {
        private let connection: Connection

        init(_ connection: Connection) { self.connection = connection }

        func versions(_ entity: EntityKind, _ id: TextID) throws -> VersionedRow? {
            let select = try connection.statements.slot(StatementSlot.row(entity, .select), on: connection) {
                ReplicaStore.rowSQL[entity]!.select
            }
            let partial = try connection.statements.slot(StatementSlot.hot(.selectPartial), on: connection) {
                HotStatement.selectPartial.sql
            }
            return try ReplicaStore.readVersions(entity, id, typed: select, partial: partial)
        }
    }

    /// A row's record: from its typed table when complete, else from `partial_row`; nil
    /// when the row has none. The statements are `rowSQL[entity].select` and
    /// `HotStatement.selectPartial`, reset; they are left reset.
    static func readVersions(
        _ entity: EntityKind, _ id: TextID,
        typed: Statement, partial: Statement?
    ) throws -> VersionedRow? {
        defer { typed.reset(); partial?.reset() }
        try typed.bind(id: id, at: 1)
        if try typed.step() { return try decodeVersions(typed, column: 0, entity: entity, rowID: id.text, typedColumns: 1) }
        guard let partial else { return nil }
        try partial.bind(.text(entity.rawValue), at: 1)
        try partial.bind(id: id, at: 2)
        guard try partial.step() else { return nil }
        return try decodeVersions(partial, column: 0, entity: entity, rowID: id.text, typedColumns: nil)
    }

    /// Decodes the record in `column`; `typedColumns`: where the row's typed columns start
    /// (in schema order) in a typed row, which hold the values the record leaves out; nil
    /// for `partial_row`.
    static func decodeVersions(
        _ statement: Statement, column: Int32, entity: EntityKind, rowID: @autoclosure () -> String,
        typedColumns: Int32?
    ) throws -> VersionedRow {
        do {
            return try statement.withBlob(column) { bytes in
                try RowVersions.decode(
                    bytes, schema: entity.schema,
                    column: typedColumns.map { first in { statement.value(first + Int32($0)) } })
            }
        } catch let error as RowVersions.DecodingError {
            throw StoreError.corruptRow(entity, rowID: rowID(), reason: error.reason)
        }
    }

    /// Writes a row: a complete row (every field arrived) goes to its typed table, columns
    /// and versions record in one B-tree write, and the typed table's constraints have the
    /// last word; a row still missing fields goes to `partial_row` until the change that
    /// completes it. Keeps `change_index` pointing at the changes the row still holds a
    /// field of: a change whose every field was superseded leaves the index (the later
    /// change that superseded it carries the values now).
    /// `fresh`: the row must not exist yet (an insert, which fails if it does).
    package func saveRow(
        _ entity: EntityKind, _ id: TextID, before: VersionedRow, after: VersionedRow,
        fresh: Bool = false
    ) throws {
        let complete = Self.isComplete(after)
        do {
            if complete, fresh {
                // Held, and made with its neighbours by one multi-row insert (HeldInserts.swift).
                connection.held.hold(entity, id: id, row: after)
            } else if complete, let columns = Self.columns(after) {
                let rowID = id.text
                let record = RowVersions.encode(after, inTypedRow: true)
                let statement = try rowStatement(entity, .upsert)
                try statement.bind(.text(rowID), at: 1)
                for (index, value) in columns.enumerated() { try statement.bind(value, at: Int32(index + 2)) }
                try statement.bind(blob: record, at: Int32(columns.count + 2))
                if let key = KeyColumn.of(entity) { try statement.bind(KeyColumn.key(of: columns[key.field]), at: Int32(columns.count + 3)) }
                while try statement.step() {}
                statement.reset()
                if !before.isEmpty && !Self.isComplete(before) {
                    try hot(.deletePartial).run([.text(entity.rawValue), .text(rowID)]) // completed now
                }
            } else {
                let record = RowVersions.encode(after, inTypedRow: false)
                let statement = try hot(fresh ? .insertPartial : .upsertPartial)
                try statement.bind(.text(entity.rawValue), at: 1)
                try statement.bind(id: id, at: 2)
                try statement.bind(blob: record, at: 3)
                while try statement.step() {}
                statement.reset()
            }
        } catch let error as SQLiteError where error.isConstraint {
            throw StoreError.constraint(entity, rowID: id.text, error)
        }
        // The changes the row refers to (a handful): those it no longer does lose their index
        // entry, those it newly does gain one, each once, in field order. Found by scanning
        // the two rows in place (lists of them cost two arrays a write).
        try before.withVersions { old in
            try after.withVersions { new in
                try before.forEach { number, version in
                    let ref = version.changeRef
                    guard !before.contains(ref, before: number, in: old), !after.contains(ref, in: new) else { return }
                    try hot(.deleteIndex).run([.integer(ref.origin.storage), .integer(Int64(ref.seq))])
                    try recordStub(origin: ref.origin, seq: ref.seq, hlc: version.stamp.hlc)
                }
                after.forEach { number, version in
                    let ref = version.changeRef
                    guard !after.contains(ref, before: number, in: new), !before.contains(ref, in: old) else { return }
                    connection.held.hold(origin: ref.origin.storage, seq: Int64(ref.seq), entity: entity, id: id)
                }
            }
        }
        try connection.flushIfFull()
    }

    /// Whether a row has every field that is not `optional` (its typed table can hold it).
    package static func isComplete(_ row: VersionedRow) -> Bool {
        let schema = row.schema
        guard row.count >= schema.requiredFieldCount else { return false }
        return schema.fields.indices.allSatisfy { row.contains($0) || schema.fields[$0].optional }
    }

    /// The typed columns of a row in schema order, or nil while a field that is not
    /// `optional` is missing (an optional one missing is null).
    package static func columns(_ row: VersionedRow) -> [FieldValue]? {
        guard isComplete(row) else { return nil }
        return row.withVersions { versions in
            // The value alone copied; an optional field without a version is null.
            row.schema.fields.indices.map { row.contains($0) ? versions[$0]!.value : .null }
        }
    }

    /// The SQL of each typed table: read a row's versions, upsert a whole row (a new row is
    /// inserted by ``HeldInserts``): its id, fields, record, then its key column if it has one
    /// (``KeyColumn``).
    package static let rowSQL: [EntityKind: (select: String, upsert: String)] = Dictionary(
        uniqueKeysWithValues: EntityKind.allCases.map { entity in
            let names = entity.schema.fieldNames
            let table = entity.rawValue
            let written = names + ["versions"] + (KeyColumn.of(entity).map { [$0.column] } ?? [])
            let placeholders = (1...written.count + 1).map { "?\($0)" }.joined(separator: ", ")
            let insert = "INSERT INTO \(table) (id, \(written.joined(separator: ", "))) VALUES (\(placeholders))"
            let update = written.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            return (
                entity,
                (
                    select: "SELECT versions, \(names.joined(separator: ", ")) FROM \(table) WHERE id = ?1",
                    upsert: insert + " ON CONFLICT (id) DO UPDATE SET " + update
                )
            )
        })

}
