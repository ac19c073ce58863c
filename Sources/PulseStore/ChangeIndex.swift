import CSQLite
import PulseModel

/// How `change_index` names the row of a change (migration 11): the entity as a small
/// integer code, the row id as its 16 bytes when it is a lowercase canonical UUID (every id
/// this program makes), else as its text. ≈ 65 → 34 bytes an entry: every row written or
/// merged appends one, and the shorter entry cost half as much to insert (a catch-up
/// profile put the append at 12 % of the apply).
enum ChangeIndex {
    /// The entity's code in `change_index`: ``EntityKind/code``, the wire's (stored on disk:
    /// a code is never reused or changed).
    static func code(_ entity: EntityKind) -> Int64 { Int64(entity.code) }

    /// The entity of a stored code; nil for a code no entity has.
    static func entity(code: Int64) -> EntityKind? {
        (1...Int64(UInt8.max)).contains(code) ? EntityKind(code: UInt8(code)) : nil
    }

    /// Appends the 16 bytes the index stores for a UUID row id (most significant first);
    /// false, appending nothing, for any other id, which the index stores as its text.
    static func appendUUID(_ id: TextID, to bytes: inout [UInt8]) -> Bool {
        guard case let .uuid(high, low) = id else { return false }
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { bytes.append(contentsOf: $0) }
        return true
    }

    /// Binds a row id as the index stores it.
    static func bind(rowID: String, _ statement: Statement, at index: Int32) throws {
        var stored: [UInt8] = []
        if appendUUID(TextID(rowID), to: &stored) {
            try statement.bind(blob: stored, at: index)
        } else {
            try statement.bind(.text(rowID), at: index)
        }
    }

    /// The row id stored in `column` as an id: 16 bytes as a UUID's words, no text made;
    /// nil for anything but 16 bytes or text.
    static func id(_ statement: Statement, column: Int32) -> TextID? {
        switch statement.type(column) {
        case SQLITE_TEXT: return TextID(statement.text(column))
        case SQLITE_BLOB:
            return statement.withBlob(column) { bytes in
                bytes.count == 16
                    ? .uuid(
                        UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))) : nil
            }
        default: return nil
        }
    }

    /// Migration 11 in SQL: the new table beside the old one.
    static let migration11 = """
        CREATE TABLE change_index_11 (
            origin INTEGER NOT NULL CHECK (origin <> 0),
            seq INTEGER NOT NULL CHECK (seq > 0),
            entity INTEGER NOT NULL,
            row_id NOT NULL CHECK (typeof(row_id) = 'text' OR length(row_id) = 16),
            PRIMARY KEY (origin, seq)
        ) WITHOUT ROWID;
        """

    /// Migration 11: every entry rewritten in key order (appended at the new table's right
    /// edge; one statement streams the old table, so memory stays flat), then the new table
    /// takes the old one's name.
    static func rewrite(_ connection: Connection) throws {
        let insert = try connection.statement("INSERT INTO change_index_11 (origin, seq, entity, row_id) VALUES (?1, ?2, ?3, ?4)")
        try connection.query("SELECT origin, seq, entity, row_id FROM change_index ORDER BY origin, seq") { statement in
            while try statement.step() {
                guard let entity = EntityKind(rawValue: statement.text(2)) else {
                    throw StoreError.corruptIndex(
                        "change \(statement.int(0))#\(statement.int(1)) names an unknown entity \(statement.text(2).debugDescription)")
                }
                insert.reset()
                try insert.bind(statement.int(0), at: 1)
                try insert.bind(statement.int(1), at: 2)
                try insert.bind(code(entity), at: 3)
                try bind(rowID: statement.text(3), insert, at: 4)
                while try insert.step() {}
            }
        }
        insert.reset()
        try connection.execute("DROP TABLE change_index; ALTER TABLE change_index_11 RENAME TO change_index")
    }
}
