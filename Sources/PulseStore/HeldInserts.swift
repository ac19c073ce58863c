import PulseModel

/// Inserts a write transaction holds back to make them together: new typed rows and
/// `change_index` entries, made by multi-row `INSERT … VALUES (…), (…), …` statements of up
/// to ``chunk`` rows instead of one statement each.
///
/// Why: a statement's fixed cost (step, opening the table's cursor, the descent from the
/// root, halt, reset) was paid once per row, twice per change. Measured with the system
/// SQLite on these machines (C, one transaction of 100 000 rows, the store's tables): a
/// `change_index` entry 0.59 → 0.25 µs, a new shopping item with its record 1.72 → 1.06 µs
/// (64 rows a statement; 2 rows a statement is slower than 1, 10 already gains most).
///
/// The rule that keeps this invisible: **nothing on the connection observes the database
/// while rows are held.** `Statement.step()` and `Connection.execute(_:)` flush the held
/// rows before they run anything else (a read of a row just created, a delete of an
/// index entry just held, the commit); a rollback discards them. So every statement sees
/// exactly what it would have seen had each insert run at once; only the moment a
/// constraint refuses a row moves, from the call that made the row to the next statement,
/// and the error still names the row (a refused chunk is rerun row by row to find it).
///
/// Threading rule: the connection's (one thread at a time); only inside a transaction.
final class HeldInserts {
    /// Rows per multi-row statement; a remainder goes by ``smallChunk``s, then one by one.
    static let chunk = 64
    static let smallChunk = 8

    struct TypedRow {
        let rowID: String
        let columns: [FieldValue]
        let record: [UInt8]
    }

    struct IndexEntry {
        let origin: Int64
        let seq: Int64
        let entity: EntityKind
        let rowID: String
    }

    /// New rows of each typed table, by `EntityKind.ordinal`, in the order held.
    fileprivate(set) var rows = [[TypedRow]](repeating: [], count: EntityKind.allCases.count)
    fileprivate(set) var index: [IndexEntry] = []
    /// Rows and entries held: 0 when there is nothing to flush (the one check `step()` makes).
    private(set) var count = 0

    func hold(_ entity: EntityKind, _ row: TypedRow) {
        rows[entity.ordinal].append(row)
        count += 1
    }

    func hold(_ entry: IndexEntry) {
        index.append(entry)
        count += 1
    }

    /// Everything held, which is no longer held.
    fileprivate func take() -> (rows: [[TypedRow]], index: [IndexEntry]) {
        defer {
            for ordinal in rows.indices where !rows[ordinal].isEmpty { rows[ordinal] = [] }
            index = []
            count = 0
        }
        return (rows, index)
    }

    /// Forgets everything held (the transaction rolls back).
    func discard() { _ = take() }
}

extension Connection {
    /// Makes every held insert now, typed rows first (in the order held, table by table),
    /// then the index entries. Throws the first refusal as ``StoreError/constraint(_:rowID:_:)``
    /// naming the row (of the entry, for an index entry); what was held is gone either way, and the caller's transaction
    /// must roll back, as it would have had the insert been made at once.
    func flushHeld() throws {
        let (rows, index) = held.take()
        for (ordinal, rows) in rows.enumerated() where !rows.isEmpty {
            let entity = EntityKind.allCases[ordinal]
            let width = entity.schema.fields.count + 2
            try insertChunked(rows.count, width: width, sql: { Self.typedInsertSQL(entity, rows: $0) }, slot: ordinal) { offset in
                let row = rows[offset]
                var bytes = row.rowID.utf8.count + row.record.count
                for case let .text(text) in row.columns { bytes += text.utf8.count }
                return bytes
            } bind: { statement, first, offset, room in
                let row = rows[offset]
                try statement.bind(text: row.rowID, at: first, in: &room)
                for (column, value) in row.columns.enumerated() { try statement.bind(value, at: first + 1 + Int32(column), in: &room) }
                try statement.bind(blob: row.record, at: first + Int32(width) - 1, in: &room)
            } refused: { offset, error in
                StoreError.constraint(entity, rowID: rows[offset].rowID, error)
            }
        }
        if !index.isEmpty {
            try insertChunked(index.count, width: 4, sql: Self.indexInsertSQL, slot: EntityKind.allCases.count) { offset in
                index[offset].rowID.utf8.count // at least the 16 bytes of a UUID's 36 characters
            } bind: { statement, first, offset, room in
                let entry = index[offset]
                try statement.bind(entry.origin, at: first)
                try statement.bind(entry.seq, at: first + 1)
                try statement.bind(ChangeIndex.code(entry.entity), at: first + 2)
                try ChangeIndex.bind(rowID: entry.rowID, statement, at: first + 3, in: &room)
            } refused: { offset, error in
                // Two rows claimed one change (a peer's bad batch, or a damaged index): the row
                // whose entry came second is named.
                StoreError.constraint(index[offset].entity, rowID: index[offset].rowID, error)
            }
        }
    }

    /// Inserts `count` rows of `width` values by statements of ``HeldInserts/chunk``,
    /// ``HeldInserts/smallChunk`` and 1 rows. `bind(statement, first, offset, room)` binds
    /// row `offset` at parameters `first…`, its text and blobs in `room`, which has
    /// `bytes(offset)` for it. A refused statement of several rows (which SQLite undoes
    /// whole) is rerun row by row, so that `refused(offset, error)` names the row.
    private func insertChunked(_ count: Int, width: Int, sql: (Int) -> String, slot: Int,
                               bytes: (Int) -> Int,
                               bind: (Statement, Int32, Int, inout BindingRoom) throws -> Void,
                               refused: (Int, SQLiteError) -> any Error) throws {
        /// Binds rows `offset..<offset + size` and runs the statement. The bindings point into
        /// one allocation for all their bytes, and are cleared before it is freed.
        func run(_ statement: Statement, _ offset: Int, _ size: Int) throws {
            var total = 0
            for row in offset..<offset + size { total += bytes(row) }
            try withUnsafeTemporaryAllocation(byteCount: total, alignment: 1) { buffer in
                defer { statement.reset() }
                var room = BindingRoom(buffer)
                for row in 0..<size { try bind(statement, Int32(row * width + 1), offset + row, &room) }
                while try statement.step() {}
            }
        }
        var offset = 0
        for size in [HeldInserts.chunk, HeldInserts.smallChunk, 1] {
            while count - offset >= size {
                do {
                    try run(try heldStatement(slot: slot, size: size, sql: sql), offset, size)
                } catch let error as SQLiteError where error.isConstraint {
                    guard size > 1 else { throw refused(offset, error) }
                    let single = try heldStatement(slot: slot, size: 1, sql: sql)
                    for row in 0..<size {
                        do {
                            try run(single, offset + row, 1)
                        } catch let rowError as SQLiteError where rowError.isConstraint {
                            throw refused(offset + row, rowError)
                        }
                    }
                    throw error // refused together, accepted one by one: not expected; refuse anyway
                }
                offset += size
            }
        }
    }

    /// The multi-row insert of `size` rows for `slot` (a typed table by ordinal, or the
    /// index after them), prepared once for the connection's life.
    private func heldStatement(slot: Int, size: Int, sql: (Int) -> String) throws -> Statement {
        let key = slot * 3 + (size == HeldInserts.chunk ? 0 : size == HeldInserts.smallChunk ? 1 : 2)
        if let statement = heldStatements[key] {
            statement.reset()
            return statement
        }
        let statement = try Statement(connection: self, sql: sql(size))
        heldStatements[key] = statement
        return statement
    }

    static func typedInsertSQL(_ entity: EntityKind, rows: Int) -> String {
        let names = entity.schema.fieldNames
        let row = "(" + Array(repeating: "?", count: names.count + 2).joined(separator: ", ") + ")"
        return "INSERT INTO \(entity.rawValue) (id, \(names.joined(separator: ", ")), versions) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    static func indexInsertSQL(rows: Int) -> String {
        "INSERT INTO change_index (origin, seq, entity, row_id) VALUES "
            + Array(repeating: "(?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }

    /// Slots of ``heldStatement(slot:size:sql:)``: three sizes for each table and the index.
    static let heldStatementSlots = (EntityKind.allCases.count + 1) * 3
}
