import PulseModel

/// The columns the store keeps beside a typed table's fields, each derived from one field, so
/// that a household rule can find rows by an index instead of reading the table. Local: never
/// replicated, never in a row's record; written with the row by both paths that write one
/// (``ReplicaStore/saveRow(_:_:before:after:fresh:)``'s upsert and ``HeldInserts``), last in
/// the statement's columns.
///
/// One today (migration 21): a shopping item's `name_key`, its name as the household compares
/// names (`String.nameKey`), indexed over the items that are not deleted. Issue 52's rule (never
/// twice on the list, in any case) read the whole list and the restock pool at every addition:
/// 56 ms a durable write on the bench's 56 000-item list.
enum KeyColumn {
    /// The key column of each entity (by `EntityKind.ordinal`): its name and the number of the
    /// field it folds.
    static let byOrdinal: [(column: String, field: Int)?] = EntityKind.allCases.map { entity in
        entity == .shoppingItem ? ("name_key", entity.schema.fieldNames.firstIndex(of: "name")!) : nil
    }

    static func of(_ entity: EntityKind) -> (column: String, field: Int)? { byOrdinal[entity.ordinal] }

    /// The key of a field's value (text; anything else has no key and is refused by the
    /// table's constraint).
    static func key(of value: FieldValue) -> FieldValue {
        if case let .text(text) = value { return .text(text.nameKey) }
        return .null
    }

    /// Migration 21: `shopping_item` rebuilt with `name_key` (SQLite adds a NOT NULL column only
    /// with a default, which every existing row would then hold), filled by Swift's folding, and
    /// its index over the items on the list or in the pool (the rows the rule looks up; deleted
    /// items stay as rows forever).
    static let migration21 = """
        CREATE TABLE shopping_item_21 (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
            state TEXT NOT NULL CHECK (state = 'active' OR state = 'restock' OR state = 'deleted'),
            listed INTEGER NOT NULL CHECK (listed >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1),
            name_key TEXT NOT NULL CHECK (length(name_key) >= 1)
        ) WITHOUT ROWID;
        """

    static func fillMigration21(_ connection: Connection) throws {
        // Copied with the name as its key, then each name that folds to another text keyed
        // anew (read first: the table is not written while a read of it steps).
        try connection.execute(
            """
            INSERT INTO shopping_item_21 (id, name, state, listed, versions, name_key)
                SELECT id, name, state, listed, versions, name FROM shopping_item;
            """)
        var refolded: [(id: String, key: String)] = []
        try connection.query("SELECT id, name FROM shopping_item_21") { statement in
            while try statement.step() {
                let name = statement.text(1)
                if name.nameKey != name { refolded.append((statement.text(0), name.nameKey)) }
            }
        }
        let update = try connection.statement("UPDATE shopping_item_21 SET name_key = ?2 WHERE id = ?1")
        for row in refolded { try update.run([.text(row.id), .text(row.key)]) }
        try connection.execute(
            """
            DROP TABLE shopping_item;
            ALTER TABLE shopping_item_21 RENAME TO shopping_item;
            CREATE INDEX shopping_item_by_state ON shopping_item (state, listed);
            CREATE INDEX shopping_item_by_name_key ON shopping_item (name_key) WHERE state <> 'deleted';
            """)
    }
}
