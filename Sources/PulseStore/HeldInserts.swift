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
/// What is held is bytes, not Swift values: each row's id, columns and record are copied
/// into one buffer as they are held, and bound from there where they lie (`SQLITE_STATIC`).
/// Keeping each row's values (its versions, its record in an array of its own, its id) cost
/// an allocation or two a row and their release, and SQLite's copy of each text and blob
/// another (a tenth of a local write's instructions). The statement is reset, its bindings
/// cleared, before the buffer changes again.
///
/// Threading rule: the connection's (one thread at a time); only inside a transaction.
final class HeldInserts {
    /// Rows per multi-row statement; a remainder goes by ``smallChunk``s, then one by one.
    static let chunk = 64
    static let smallChunk = 8
    /// Held rows and entries past which the writer flushes them (``Connection/flushIfFull()``):
    /// a full chunk of each. Holding a whole transaction's rows until its commit kept
    /// every one in memory at once (10 000 new items: megabytes, out of the caches, and
    /// ×1.8 the plain insert's time where the instructions were ×1.6).
    static let flushAt = 2 * chunk

    /// One bound value: a number, or text or a blob at `offset` in `Storage.bytes`.
    enum Value {
        case null
        case integer(Int64)
        case text(offset: Int, count: Int)
        case blob(offset: Int, count: Int)
    }

    struct IndexEntry {
        let origin: Int64
        let seq: Int64
        let entity: EntityKind
        /// The row id as the index stores it (``ChangeIndex``): a UUID's 16 bytes, or its text.
        let rowID: Value
    }

    /// What is held, in one value: each hold is one access to the class's storage (an
    /// access per array appended to cost more than the appends).
    struct Storage {
        /// The text and blobs of everything held.
        var bytes: [UInt8] = []
        /// The values of the typed rows held, a row's one after another: its id, its columns
        /// in schema order, its record, its key column if it has one (the width of the
        /// table's insert: ``Connection/typedInsertWidth(_:)``).
        var values: [Value] = []
        /// For each typed table (by `EntityKind.ordinal`), where each of its rows starts in
        /// `values`, in the order held.
        var rows = [[Int]](repeating: [], count: EntityKind.allCases.count)
        var index: [IndexEntry] = []
        /// Rows and entries held: 0 when there is nothing to flush (the one check `step()` makes).
        var count = 0

        mutating func hold(_ entity: EntityKind, id: TextID, row: VersionedRow) {
            rows[entity.ordinal].append(values.count)
            values.append(text(id))
            row.withVersions { versions in
                for number in row.schema.fields.indices {
                    guard row.contains(number) else { values.append(.null); continue }
                    switch versions[number].unsafelyUnwrapped.value {
                    case .null: values.append(.null)
                    case let .integer(value): values.append(.integer(value))
                    case let .text(text): values.append(self.text(text))
                    }
                }
            }
            let start = bytes.count
            RowVersions.encode(row, inTypedRow: true, appendingTo: &bytes)
            values.append(.blob(offset: start, count: bytes.count - start))
            if let key = KeyColumn.of(entity) {
                row.withVersions { versions in
                    if case let .text(name)? = versions[key.field]?.value {
                        values.append(text(name.nameKey))
                    } else {
                        values.append(.null) // refused by the table's constraint
                    }
                }
            }
            count += 1
        }

        mutating func hold(origin: Int64, seq: Int64, entity: EntityKind, id: TextID) {
            let start = bytes.count
            let stored = ChangeIndex.appendUUID(id, to: &bytes) ? Value.blob(offset: start, count: 16) : text(id)
            index.append(IndexEntry(origin: origin, seq: seq, entity: entity, rowID: stored))
            count += 1
        }

        /// `text` copied into `bytes`.
        private mutating func text(_ text: String) -> Value {
            let start = bytes.count
            var text = text
            text.withUTF8 { bytes.append(contentsOf: UnsafeRawBufferPointer($0)) }
            return .text(offset: start, count: bytes.count - start)
        }

        /// An id's text copied into `bytes` (a UUID's written from its words).
        private mutating func text(_ id: TextID) -> Value {
            id.withUTF8 { utf8 in
                let start = bytes.count
                bytes.append(contentsOf: utf8)
                return .text(offset: start, count: utf8.count)
            }
        }

        /// The text of a held value (for an error naming the row): text as it is, a UUID's
        /// 16 bytes as its text (the text of the id ``ChangeIndex/id(_:column:)`` reads back).
        func string(_ value: Value) -> String {
            switch value {
            case .null: return ""
            case let .integer(value): return String(value)
            case let .text(offset, count): return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
            case let .blob(offset, count):
                return count == 16
                    ? bytes.withUnsafeBytes { Hex.uuidText(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + 16])) }
                    : Hex.string(bytes[offset..<offset + count])
            }
        }

        mutating func removeAll() {
            bytes.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
            for ordinal in rows.indices where !rows[ordinal].isEmpty { rows[ordinal].removeAll(keepingCapacity: true) }
            index.removeAll(keepingCapacity: true)
            count = 0
        }
    }

    fileprivate(set) var storage = Storage()

    /// Rows and entries held: 0 when there is nothing to flush (the one check `step()` makes).
    var count: Int { storage.count }

    /// Holds a new complete row of `entity`: its id, its columns (each field's value, null
    /// for an optional one it lacks) and its record.
    func hold(_ entity: EntityKind, id: TextID, row: VersionedRow) {
        storage.hold(entity, id: id, row: row)
    }

    /// Holds the index entry of change `origin`#`seq`, of row `rowID` of `entity`.
    func hold(origin: Int64, seq: Int64, entity: EntityKind, id: TextID) {
        storage.hold(origin: origin, seq: seq, entity: entity, id: id)
    }

    /// Forgets everything held, keeping the room (a transaction's next rows reuse it).
    func discard() { storage.removeAll() }
}

extension Connection {
    /// Makes every held insert now, typed rows first (in the order held, table by table),
    /// then the index entries. Throws the first refusal as ``StoreError/constraint(_:rowID:_:)``
    /// naming the row (of the entry, for an index entry); what was held is gone either way, and the caller's transaction
    /// must roll back, as it would have had the insert been made at once.
    func flushHeld() throws {
        let held = self.held
        // The statements below step with nothing held (no flush within the flush); what was
        // held is forgotten at the end, whatever happens.
        held.storage.count = 0
        defer { held.discard() }
        try flush(held.storage) // (a copy that ends with the call: `discard` then empties the arrays in place, keeping them)
    }

    private func flush(_ storage: HeldInserts.Storage) throws {
        try storage.bytes.withUnsafeBytes { bytes in
            func bind(_ value: HeldInserts.Value, _ statement: Statement, at index: Int32) throws {
                switch value {
                case .null: try statement.bind(.null, at: index)
                case let .integer(value): try statement.bind(value, at: index)
                case let .text(offset, count): try statement.bind(staticText: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), at: index)
                case let .blob(offset, count): try statement.bind(staticBlob: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), at: index)
                }
            }
            try storage.values.withUnsafeBufferPointer { values in
                for (ordinal, rows) in storage.rows.enumerated() where !rows.isEmpty {
                    let entity = EntityKind.allCases[ordinal]
                    let width = Self.typedInsertWidth(entity)
                    try insertChunked(rows.count, width: width, sql: { Self.typedInsertSQL(entity, rows: $0) }, slot: ordinal) { statement, first, offset in
                        for column in 0..<width { try bind(values[rows[offset] + column], statement, at: first + Int32(column)) }
                    } refused: { offset, error in
                        StoreError.constraint(entity, rowID: storage.string(values[rows[offset]]), error)
                    }
                }
            }
            let index = storage.index
            if !index.isEmpty {
                try insertChunked(index.count, width: 4, sql: Self.indexInsertSQL, slot: EntityKind.allCases.count) { statement, first, offset in
                    try statement.bind(index[offset].origin, at: first)
                    try statement.bind(index[offset].seq, at: first + 1)
                    try statement.bind(ChangeIndex.code(index[offset].entity), at: first + 2)
                    try bind(index[offset].rowID, statement, at: first + 3)
                } refused: { offset, error in
                    // Two rows claimed one change (a peer's bad batch, or a damaged index): the row
                    // whose entry came second is named.
                    StoreError.constraint(index[offset].entity, rowID: storage.string(index[offset].rowID), error)
                }
            }
        }
    }

    /// Makes the held inserts once there are ``HeldInserts/flushAt`` of them.
    func flushIfFull() throws {
        if held.count >= HeldInserts.flushAt { try flushHeld() }
    }

    /// Inserts `count` rows of `width` values by statements of ``HeldInserts/chunk``,
    /// ``HeldInserts/smallChunk`` and 1 rows. `bind(statement, first, offset)` binds row
    /// `offset` at parameters `first…`; the statement is reset, its bindings cleared, after
    /// each run. A refused statement of several rows (which SQLite undoes whole) is rerun row
    /// by row, so that `refused(offset, error)` names the row.
    private func insertChunked(
        _ count: Int, width: Int, sql: (Int) -> String, slot: Int,
        bind: (Statement, Int32, Int) throws -> Void,
        refused: (Int, SQLiteError) -> any Error
    ) throws {
        func run(_ statement: Statement, _ offset: Int, _ size: Int) throws {
            defer { statement.reset() }
            for row in 0..<size { try bind(statement, Int32(row * width + 1), offset + row) }
            while try statement.step() {}
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
        return try statements.slot(StatementSlot.held(key), on: self) { sql(size) }
    }

    /// The values of one row of `entity`'s insert: id, fields, record, key column (``KeyColumn``).
    static func typedInsertWidth(_ entity: EntityKind) -> Int {
        entity.schema.fields.count + 2 + (KeyColumn.of(entity) == nil ? 0 : 1)
    }

    static func typedInsertSQL(_ entity: EntityKind, rows: Int) -> String {
        let names = entity.schema.fieldNames + ["versions"] + (KeyColumn.of(entity).map { [$0.column] } ?? [])
        let row = "(" + Array(repeating: "?", count: names.count + 1).joined(separator: ", ") + ")"
        return "INSERT INTO \(entity.rawValue) (id, \(names.joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    static func indexInsertSQL(rows: Int) -> String {
        "INSERT INTO change_index (origin, seq, entity, row_id) VALUES "
            + Array(repeating: "(?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }

    /// Slots of ``heldStatement(slot:size:sql:)``: three sizes for each table and the index.
    static let heldStatementSlots = (EntityKind.allCases.count + 1) * 3
}
