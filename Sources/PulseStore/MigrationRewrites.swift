import PulseModel

/// The migrations that reshape data SQL cannot (Swift code run in the step's transaction):
/// 2 folds field versions into row records, 3 moves each complete row's record into its typed
/// row, 8 rewrites every record in ``RowVersions`` format 2.
extension Migrations {
    /// Migration 3: the record of each row in a typed table moves into it; what stays in
    /// `row_version` (rows not complete yet) becomes `partial_row`.
    static func moveVersionsIntoRows(_ connection: Connection) throws {
        for entity in entitiesOfMigration1 {
            let table = entity.rawValue
            try connection.execute(
                """
                UPDATE \(table) SET versions = coalesce((SELECT r.versions FROM row_version AS r
                                                        WHERE r.entity = '\(table)' AND r.row_id = \(table).id), x'0000');
                DELETE FROM row_version WHERE entity = '\(table)' AND row_id IN (SELECT id FROM \(table));
                """)
            // A typed row is only ever projected from its record; one without is damage.
            if let orphan = try connection.query("SELECT id FROM \(table) WHERE versions = x'0000' LIMIT 1", [], { try $0.step() ? $0.text(0) : nil }) {
                throw StoreError.corruptRow(entity, rowID: orphan, reason: "the row has no versions record to migrate")
            }
        }
        try connection.execute("ALTER TABLE row_version RENAME TO partial_row")
    }

    /// Migration 8: every record (typed rows and `partial_row`) re-encoded in format 2, a
    /// thousand rows at a time in key order (memory stays bounded on a large household).
    static func reencodeRecords(_ connection: Connection) throws {
        for entity in entitiesOfMigration8 {
            let table = entity.rawValue, schema = entity.schema
            // A column a later migration adds (an optional field: `member.language`, 14) is
            // not there yet: read as NULL, which is what such a field holds at migration 8.
            var existing = Set<String>()
            try connection.query("SELECT name FROM pragma_table_info('\(table)')") { statement in
                while try statement.step() { existing.insert(statement.text(0)) }
            }
            let columns = schema.fieldNames.map { existing.contains($0) ? $0 : "NULL" }
            let select = try connection.statement(
                "SELECT id, versions, \(columns.joined(separator: ", ")) FROM \(table) WHERE id > ?1 ORDER BY id LIMIT 1000")
            let update = try connection.statement("UPDATE \(table) SET versions = ?2 WHERE id = ?1")
            var last = ""
            while true {
                var records: [(String, [UInt8])] = []
                select.reset()
                try select.bind(.text(last), at: 1)
                while try select.step() {
                    let rowID = select.text(0)
                    let fields = try ReplicaStore.decodeVersions(select, column: 1, entity: entity, rowID: rowID, typedColumns: 2)
                    records.append((rowID, RowVersions.encode(fields, inTypedRow: true)))
                }
                select.reset()
                guard let end = records.last?.0 else { break }
                for (rowID, record) in records {
                    update.reset()
                    try update.bind(.text(rowID), at: 1)
                    try update.bind(blob: record, at: 2)
                    while try update.step() {}
                }
                update.reset()
                last = end
            }
        }
        var partial: [(String, String, [UInt8])] = []
        try connection.query("SELECT entity, row_id, versions FROM partial_row") { statement in
            while try statement.step() {
                let rowID = statement.text(1)
                guard let entity = EntityKind(rawValue: statement.text(0)) else {
                    throw StoreError.corruptIndex("a partial row of an unknown entity \(statement.text(0).debugDescription)")
                }
                let fields = try ReplicaStore.decodeVersions(statement, column: 2, entity: entity, rowID: rowID, typedColumns: nil)
                partial.append((entity.rawValue, rowID, RowVersions.encode(fields, inTypedRow: false)))
            }
        }
        let update = try connection.statement("UPDATE partial_row SET versions = ?3 WHERE entity = ?1 AND row_id = ?2")
        for (entity, rowID, record) in partial {
            update.reset()
            try update.bind(.text(entity), at: 1)
            try update.bind(.text(rowID), at: 2)
            try update.bind(blob: record, at: 3)
            while try update.step() {}
        }
        update.reset()
    }

    /// Migration 2: one `row_version` record per row of `field_version`, which goes.
    static func foldFieldVersions(_ connection: Connection) throws {
        let insert = try connection.statement("INSERT INTO row_version (entity, row_id, versions) VALUES (?1, ?2, ?3)")
        func flush(_ key: (String, String)?, _ fields: [String: FieldVersion]) throws {
            guard let key, !fields.isEmpty else { return }
            insert.reset()
            try insert.bind(.text(key.0), at: 1)
            try insert.bind(.text(key.1), at: 2)
            guard let entity = EntityKind(rawValue: key.0) else {
                throw StoreError.corruptIndex("a field version of an unknown entity \(key.0.debugDescription)")
            }
            guard let row = VersionedRow(entity.schema, byName: fields) else {
                let unknown = fields.keys.first { entity.schema.number(of: $0) == nil } ?? ""
                throw StoreError.corruptRow(entity, rowID: key.1, reason: "unknown field \(unknown.debugDescription)")
            }
            try insert.bind(blob: RowVersions.encode(row, inTypedRow: false), at: 3)
            while try insert.step() {}
        }
        try connection.query(
            """
            SELECT entity, row_id, field, value, hlc, origin, seq, base_hlc, base_origin, member
            FROM field_version ORDER BY entity, row_id
            """
        ) { statement in
            var key: (String, String)?
            var fields: [String: FieldVersion] = [:]
            while try statement.step() {
                let rowKey = (statement.text(0), statement.text(1))
                if key == nil || key! != rowKey {
                    try flush(key, fields)
                    key = rowKey
                    fields = [:]
                }
                let base = statement.optionalInt(7).map {
                    Stamp(hlc: HybridTimestamp(rawValue: $0), origin: ReplicaID(storage: statement.int(8)))
                }
                fields[statement.text(2)] = FieldVersion(
                    value: statement.value(3),
                    stamp: Stamp(hlc: HybridTimestamp(rawValue: statement.int(4)), origin: ReplicaID(storage: statement.int(5))),
                    seq: UInt64(statement.int(6)), base: base, member: statement.optionalText(9))
            }
            try flush(key, fields)
        }
        insert.reset()
        try connection.execute("DROP TABLE field_version")
    }
}
