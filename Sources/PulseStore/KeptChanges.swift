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
    /// The fields of a kept change as `kept_change.fields` holds them.
    struct KeptFields: Codable {
        var fields: [HeldChange.Field]
    }

    static func encodeKept(_ fields: [FieldWrite]) throws -> [UInt8] {
        let record = KeptFields(
            fields: fields.map {
                HeldChange.Field(name: $0.field, value: $0.value, baseHLC: $0.base?.hlc.rawValue, baseOrigin: $0.base?.origin.rawValue)
            })
        return Array(try JSONEncoder().encode(record))
    }

    static func decodeKept(_ bytes: UnsafeRawBufferPointer) throws -> [FieldWrite] {
        try JSONDecoder().decode(KeptFields.self, from: Data(bytes)).fields.map { field in
            let base = field.baseHLC.flatMap { hlc in
                field.baseOrigin.map { Stamp(hlc: HybridTimestamp(rawValue: hlc), origin: ReplicaID(rawValue: $0)) }
            }
            return FieldWrite(field: field.name, value: field.value, base: base)
        }
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
        var rows: [(code: UInt8, row: String)] = []
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
                if !rows.contains(where: { $0.code == change.code && $0.row == change.rowID }) { rows.append((change.code, change.rowID)) }
            }
        }
        insert.reset()
        for (code, row) in rows {
            // One of this call's own, overwritten at once (it came late), was not kept after all.
            kept -= try forgetOverwrittenKeptChanges(code, row).count { forgotten in
                changes.contains { $0.origin.storage == forgotten.origin && Int64($0.seq) == forgotten.seq }
            }
        }
        return kept
    }

    /// Per field, last writer wins (by ``Stamp``) among the kept changes of one row: a kept
    /// change none of whose fields is the winner any more is forgotten.
    /// Returns those forgotten.
    @discardableResult
    func forgetOverwrittenKeptChanges(_ code: UInt8, _ rowID: String) throws -> [(origin: Int64, seq: Int64)] {
        var entries: [(origin: Int64, seq: Int64, stamp: Stamp, names: [String])] = []
        try connection.query(
            "SELECT origin, seq, hlc, fields FROM kept_change WHERE entity = ?1 AND row_id = ?2",
            [.integer(Int64(code)), .text(rowID)]
        ) { statement in
            while try statement.step() {
                let origin = statement.int(0)
                let names = try statement.withBlob(3) { try Self.decodeKept($0).map(\.field) }
                entries.append(
                    (origin, statement.int(1), Stamp(hlc: HybridTimestamp(rawValue: statement.int(2)), origin: ReplicaID(storage: origin)), names))
            }
        }
        guard entries.count > 1 else { return [] }
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
