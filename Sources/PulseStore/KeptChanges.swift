import FoundationEssentials
import PulseModel

/// The open schema (docs/PROTOCOL.md §7): what this release receives without knowing it — a
/// change to an entity of a later release, or the fields of a change that a later release
/// added to an entity this one knows — is **kept**, never refused for being unknown and never
/// dropped: in `kept_change`, whole, with its stamps (origin, number, clock, member, bases).
///
/// - It counts: the batch's coverage advances the version vector over it as over any change.
/// - It travels: a peer that lacks its number gets it in a BATCH as it came (the delta
///   cursor joins `kept_change` to `change_index` by number; a change with known and unknown
///   fields goes out whole again).
/// - It is never shown: the typed tables, the export and the events hold known fields only.
/// - It is merged per field by last-writer-wins when the row's next kept change arrives: a
///   kept change whose every field a later kept change of the same row overwrote is
///   forgotten (only winners are kept, as for known rows).
/// - It becomes live when the agent is upgraded to a release that knows it
///   (``adoptKnownKeptChanges()``, at the agent's start): merged then by the rules of the
///   release that knows them, no re-sync needed.
extension ReplicaStore {
    /// The fields of a kept change as release 0.10.0 wrote `kept_change.fields` (JSON): read
    /// once, by migration 19, which writes them again as ``encodeKept(_:)`` does.
    struct KeptFields: Codable {
        var fields: [HeldChange.Field]
    }

    /// `kept_change.fields` (migration 19 on): a format byte (1), the number of fields (a varint),
    /// then each field: its name (a varint length and UTF-8), a value tag (0 null, 1 integer as a
    /// zigzag varint, 2 text as a varint length and UTF-8), a base flag (0/1) and the base's
    /// clock and origin in 8 bytes each, big-endian. Decoded at every catch-up that sends a kept
    /// change, and for every merge of a row's kept changes: bytes, not JSON (a JSON record made
    /// a catch-up with 10 % kept changes half as fast as an all-known one).
    static let keptFormat: UInt8 = 1

    static func encodeKept(_ fields: [FieldWrite]) throws -> [UInt8] {
        var out: [UInt8] = [keptFormat]
        out.reserveCapacity(16 + fields.count * 24)
        func varint(_ value: UInt64) { Varint.append(value, to: &out) }
        func fixed(_ value: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) } }
        varint(UInt64(fields.count))
        for field in fields {
            varint(UInt64(field.field.utf8.count))
            out.append(contentsOf: field.field.utf8)
            switch field.value {
            case .null:
                out.append(0)
            case let .integer(value):
                out.append(1)
                varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) // zigzag
            case let .text(text):
                out.append(2)
                varint(UInt64(text.utf8.count))
                out.append(contentsOf: text.utf8)
            }
            if let base = field.base {
                out.append(1)
                fixed(UInt64(bitPattern: base.hlc.rawValue))
                fixed(base.origin.rawValue)
            } else {
                out.append(0)
            }
        }
        return out
    }

    static func decodeKept(_ bytes: UnsafeRawBufferPointer) throws -> [FieldWrite] {
        guard bytes.first == keptFormat else { return try decodeKeptJSON(bytes) }
        var at = 1
        func next() -> UInt8? {
            guard at < bytes.count else { return nil }
            defer { at += 1 }
            return bytes[at]
        }
        func byte() throws -> UInt8 {
            guard let byte = next() else { throw StoreError.corruptIndex("a kept change's fields end early") }
            return byte
        }
        func varint() throws -> UInt64 {
            do {
                return try Varint.decode(next)
            } catch {
                throw StoreError.corruptIndex("a kept change's fields hold a bad number (\(error))")
            }
        }
        func text() throws -> String {
            let length = try varint()
            guard length <= UInt64(bytes.count - at) else { throw StoreError.corruptIndex("a kept change's fields end early") }
            defer { at += Int(length) }
            guard let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[at..<at + Int(length)]), as: UTF8.self) else {
                throw StoreError.corruptIndex("a kept change's fields hold text that is not UTF-8")
            }
            return text
        }
        func fixed() throws -> UInt64 {
            var value: UInt64 = 0
            for _ in 0..<8 { value = value << 8 | UInt64(try byte()) }
            return value
        }
        let count = try varint()
        guard count <= UInt64(Limits.maxFieldsPerChange) else { throw StoreError.corruptIndex("a kept change holds \(count) fields") }
        var fields: [FieldWrite] = []
        fields.reserveCapacity(Int(count))
        for _ in 0..<count {
            let name = try text()
            let value: FieldValue
            switch try byte() {
            case 0: value = .null
            case 1:
                let zigzag = try varint()
                value = .integer(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
            case 2: value = .text(try text())
            case let tag: throw StoreError.corruptIndex("a kept change's field has value type \(tag)")
            }
            var base: Stamp?
            if try byte() == 1 {
                let hlc = try fixed()
                base = Stamp(hlc: HybridTimestamp(rawValue: Int64(bitPattern: hlc)), origin: ReplicaID(rawValue: try fixed()))
            }
            fields.append(FieldWrite(field: name, value: value, base: base))
        }
        guard at == bytes.count else { throw StoreError.corruptIndex("a kept change's fields are followed by \(bytes.count - at) bytes") }
        return fields
    }

    /// Release 0.10.0's JSON record (``KeptFields``).
    static func decodeKeptJSON(_ bytes: UnsafeRawBufferPointer) throws -> [FieldWrite] {
        try JSONDecoder().decode(KeptFields.self, from: Data(bytes)).fields.map { field in
            let base = field.baseHLC.flatMap { hlc in
                field.baseOrigin.map { Stamp(hlc: HybridTimestamp(rawValue: hlc), origin: ReplicaID(rawValue: $0)) }
            }
            return FieldWrite(field: field.name, value: field.value, base: base)
        }
    }

    /// Migration 19: every kept change's fields from 0.10.0's JSON to ``encodeKept(_:)``'s bytes.
    static func reencodeKeptFields(_ connection: Connection) throws {
        var rows: [(origin: Int64, seq: Int64, fields: [FieldWrite])] = []
        try connection.query("SELECT origin, seq, fields FROM kept_change") { statement in
            while try statement.step() {
                rows.append((statement.int(0), statement.int(1), try statement.withBlob(2) { try decodeKept($0) }))
            }
        }
        let update = try connection.statement("UPDATE kept_change SET fields = ?3 WHERE origin = ?1 AND seq = ?2")
        for row in rows {
            update.reset()
            try update.bind(row.origin, at: 1)
            try update.bind(row.seq, at: 2)
            try update.bind(blob: try encodeKept(row.fields), at: 3)
            while try update.step() {}
        }
        update.reset()
    }

    /// Keeps `changes` (inside the caller's transaction): each once (a number already kept is
    /// not kept again); then forgets, row by row, the kept changes that later ones overwrote.
    /// Returns how many were new here.
    @discardableResult
    func keep(_ changes: [KeptChange]) throws -> Int {
        guard !changes.isEmpty else { return 0 }
        let insert = try connection.statement(
            """
            INSERT INTO kept_change (origin, seq, hlc, entity, row_id, writer, fields) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT (origin, seq) DO NOTHING
            """)
        var kept = 0
        // The rows touched, in order, each once (a set beside: a batch of a later release's
        // entity holds thousands of rows, and a scan of the list for each was quadratic).
        var rows: [(code: UInt8, row: String)] = []
        var touched = Set<String>()
        for change in changes {
            insert.reset()
            try insert.bind(change.origin.storage, at: 1)
            try insert.bind(Int64(change.seq), at: 2)
            try insert.bind(change.hlc.rawValue, at: 3)
            try insert.bind(Int64(change.code), at: 4)
            try insert.bind(.text(change.rowID), at: 5)
            try insert.bind(change.member.map { .text($0) } ?? .null, at: 6)
            try insert.bind(blob: try Self.encodeKept(change.fields), at: 7)
            while try insert.step() {}
            if connection.changes == 1 {
                kept += 1
                let row = change.rowID
                if touched.insert("\(change.code)/\(row)").inserted { rows.append((change.code, row)) }
            }
        }
        insert.reset()
        var forgotten: [(origin: Int64, seq: Int64)] = []
        for (code, row) in rows { forgotten += try forgetOverwrittenKeptChanges(code, row) }
        if !forgotten.isEmpty {
            // One of this call's own, overwritten at once (it came late), was not kept after all.
            let own = Set(changes.map { "\($0.origin.storage)/\($0.seq)" })
            kept -= forgotten.count { own.contains("\($0.origin)/\($0.seq)") }
        }
        return kept
    }

    /// Per field, last writer wins (by ``Stamp``) among the kept changes of one row: a kept
    /// change none of whose fields is the winner any more is forgotten.
    /// Returns those forgotten.
    @discardableResult
    func forgetOverwrittenKeptChanges(_ code: UInt8, _ rowID: String) throws -> [(origin: Int64, seq: Int64)] {
        var entries: [(origin: Int64, seq: Int64, stamp: Stamp, names: [String])] = []
        var blobs: [[UInt8]] = []
        try connection.query(
            "SELECT origin, seq, hlc, fields FROM kept_change WHERE entity = ?1 AND row_id = ?2",
            [.integer(Int64(code)), .text(rowID)]
        ) { statement in
            while try statement.step() {
                let origin = statement.int(0)
                blobs.append(statement.withBlob(3) { Array($0) })
                entries.append(
                    (origin, statement.int(1), Stamp(hlc: HybridTimestamp(rawValue: statement.int(2)), origin: ReplicaID(storage: origin)), []))
            }
        }
        // A row's only kept change is its own winner: nothing to read (the usual case).
        guard entries.count > 1 else { return [] }
        for index in entries.indices { entries[index].names = try blobs[index].withUnsafeBytes { try Self.decodeKept($0).map(\.field) } }
        var latest: [String: Stamp] = [:]
        for entry in entries {
            for name in entry.names where latest[name].map({ $0 < entry.stamp }) ?? true { latest[name] = entry.stamp }
        }
        var forgotten: [(origin: Int64, seq: Int64)] = []
        for entry in entries where entry.names.allSatisfy({ latest[$0]! > entry.stamp }) {
            try connection.statement("DELETE FROM kept_change WHERE origin = ?1 AND seq = ?2").run([.integer(entry.origin), .integer(entry.seq)])
            try recordStub(origin: entry.stamp.origin, seq: UInt64(entry.seq), hlc: entry.stamp.hlc)
            forgotten.append((entry.origin, entry.seq))
        }
        return forgotten
    }

    /// Every kept change, by origin and number.
    public func keptChanges() throws -> [KeptChange] {
        try Self.keptChanges(connection, where: "", [])
    }

    /// The kept changes of `origin` numbered in `(after, upTo]`, in order, at most `limit`.
    static func keptChanges(_ connection: Connection, origin: ReplicaID, after: UInt64, upTo: UInt64, limit: Int) throws -> [KeptChange] {
        try keptChanges(
            connection, where: "WHERE origin = ?1 AND seq > ?2 AND seq <= ?3",
            [.integer(origin.storage), .integer(Int64(after)), .integer(Int64(upTo))], limit: limit)
    }

    private static func keptChanges(
        _ connection: Connection, where clause: String, _ values: [FieldValue], limit: Int? = nil
    ) throws
        -> [KeptChange]
    {
        let sql =
            "SELECT origin, seq, hlc, entity, row_id, writer, fields FROM kept_change \(clause) ORDER BY origin, seq"
            + (limit.map { " LIMIT \($0)" } ?? "")
        return try connection.query(sql, values) { statement in
            var changes: [KeptChange] = []
            while try statement.step() {
                let fields = try statement.withBlob(6) { try decodeKept($0) }
                changes.append(
                    KeptChange(
                        origin: ReplicaID(storage: statement.int(0)), seq: UInt64(statement.int(1)),
                        hlc: HybridTimestamp(rawValue: statement.int(2)), member: statement.optionalText(5),
                        code: UInt8(truncatingIfNeeded: statement.int(3)), rowID: statement.text(4), fields: fields))
            }
            return changes
        }
    }

    /// Makes live what this release knows of what it kept (an agent upgraded to a release
    /// that knows an entity or a field a former one kept): those fields are merged as changes
    /// from their origins — by this release's rules, conflicts and all, and the far-future
    /// ones held — and leave `kept_change`; what is still unknown stays kept. Idempotent: a
    /// crash between the two steps merges them again at the next start, which changes nothing.
    /// Returns how many kept changes gave fields.
    @discardableResult
    public func adoptKnownKeptChanges() throws -> Int {
        guard try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM kept_change)") == 1 else { return 0 }
        var adopted: [Change] = []
        var remaining: [(change: KeptChange, fields: [FieldWrite])] = []
        for kept in try keptChanges() {
            guard let entity = EntityKind(code: kept.code) else { continue }
            let known = kept.fields.filter { entity.schema.number(of: $0.field) != nil }
            guard !known.isEmpty else { continue }
            adopted.append(
                Change(origin: kept.origin, seq: kept.seq, hlc: kept.hlc, writer: kept.writer, entity: entity, row: kept.row, fields: known))
            remaining.append((kept, kept.fields.filter { entity.schema.number(of: $0.field) == nil }))
        }
        guard !adopted.isEmpty else { return 0 }
        try apply(DeltaBatch(changes: adopted))
        try inWords {
            try connection.transaction {
                for (kept, fields) in remaining {
                    if fields.isEmpty {
                        try connection.statement("DELETE FROM kept_change WHERE origin = ?1 AND seq = ?2")
                            .run([.integer(kept.origin.storage), .integer(Int64(kept.seq))])
                        try recordStub(origin: kept.origin, seq: kept.seq, hlc: kept.hlc)
                    } else {
                        let statement = try connection.statement("UPDATE kept_change SET fields = ?3 WHERE origin = ?1 AND seq = ?2")
                        try statement.bind(kept.origin.storage, at: 1)
                        try statement.bind(Int64(kept.seq), at: 2)
                        try statement.bind(blob: try Self.encodeKept(fields), at: 3)
                        while try statement.step() {}
                        statement.reset()
                    }
                }
            }
        }
        return adopted.count
    }
}
