import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

/// A connection's prepared statements: one cache, one lifetime rule. A statement is
/// prepared once for its place and kept for the connection's life; whoever takes it gets it
/// reset, bindings cleared; one whose step failed is not handed out again (the next taker
/// gets a freshly prepared one, and the failed one is finalized once its last user lets it
/// go). Places are fixed slots for the statements every change runs (found by index, not by
/// hashing their text: 4 % of a write), or the SQL text, or a typed query's shape.
final class StatementCache {
    private var slots = [Statement?](repeating: nil, count: StatementSlot.count)
    private var byText: [String: Statement] = [:]
    private var byShape: [Connection.RowQueryShape: Statement] = [:]

    func slot(_ index: Int, on connection: Connection, sql: () -> String) throws -> Statement {
        try Self.take(&slots[index], on: connection, sql: sql)
    }

    func text(_ sql: String, on connection: Connection) throws -> Statement {
        try Self.take(&byText[sql], on: connection) { sql }
    }

    func shape(_ shape: Connection.RowQueryShape, on connection: Connection, sql: () -> String) throws -> Statement {
        try Self.take(&byShape[shape], on: connection, sql: sql)
    }

    /// The lifetime rule, for every place: the kept statement, reset, unless its step
    /// failed; else one prepared now and kept there.
    private static func take(_ place: inout Statement?, on connection: Connection, sql: () -> String) throws -> Statement {
        if let kept = place, !kept.failed {
            kept.reset()
            return kept
        }
        let statement = try Statement(connection: connection, sql: sql())
        place = statement
        return statement
    }

    /// Finalizes every statement (before the connection closes).
    func removeAll() {
        slots.removeAll()
        byText.removeAll()
        byShape.removeAll()
    }
}

/// The fixed slots of ``StatementCache``: the store's hot statements, each typed table's
/// select and upsert, the multi-row inserts of held rows.
enum StatementSlot {
    static let rowBase = ReplicaStore.HotStatement.allCases.count
    static let heldBase = rowBase + EntityKind.allCases.count * 2
    static let count = heldBase + Connection.heldStatementSlots

    static func hot(_ which: ReplicaStore.HotStatement) -> Int { which.rawValue }
    static func row(_ entity: EntityKind, _ which: ReplicaStore.RowStatement) -> Int { rowBase + entity.ordinal * 2 + which.rawValue }
    static func held(_ key: Int) -> Int { heldBase + key }
}

extension ReplicaStore {
    enum RowStatement: Int { case select, upsert }

    /// The statements every change runs (fixed slots of the connection's cache).
    package enum HotStatement: Int, CaseIterable {
        case selectPartial, upsertPartial, insertPartial, deletePartial, deleteIndex
        case selectCounter, selectClock, saveClock, saveCounterAndClock, selectReplicaID, savePublished

        package var sql: String {
            switch self {
            case .selectPartial: "SELECT versions FROM partial_row WHERE entity = ?1 AND row_id = ?2"
            case .upsertPartial:
                """
                INSERT INTO partial_row (entity, row_id, versions) VALUES (?1, ?2, ?3)
                ON CONFLICT (entity, row_id) DO UPDATE SET versions = excluded.versions
                """
            case .insertPartial: "INSERT INTO partial_row (entity, row_id, versions) VALUES (?1, ?2, ?3)"
            case .deletePartial: "DELETE FROM partial_row WHERE entity = ?1 AND row_id = ?2"
            case .deleteIndex: "DELETE FROM change_index WHERE origin = ?1 AND seq = ?2"
            case .selectCounter: "SELECT seq FROM version_vector WHERE origin = ?1"
            case .selectClock:
                """
                SELECT max(coalesce((SELECT hlc FROM version_vector WHERE origin = ?1), 0),
                           coalesce((SELECT value FROM meta WHERE key = 'hlc'), 0))
                """
            case .saveClock: "UPDATE version_vector SET hlc = ?2 WHERE origin = ?1"
            case .selectReplicaID: "SELECT value FROM meta WHERE key = 'replica_id'"
            case .savePublished:
                """
                INSERT INTO meta (key, value) VALUES ('published_seq', ?1)
                ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)
                """
            case .saveCounterAndClock:
                """
                INSERT INTO version_vector (origin, seq, hlc) VALUES (?1, ?2, ?3)
                ON CONFLICT (origin) DO UPDATE SET seq = excluded.seq, hlc = excluded.hlc
                """
            }
        }
    }

    /// A hot statement, reset and ready to bind.
    func hot(_ which: HotStatement) throws -> Statement {
        try connection.statements.slot(StatementSlot.hot(which), on: connection) { which.sql }
    }

    /// A statement of `entity`'s typed table, reset and ready to bind.
    func rowStatement(_ entity: EntityKind, _ which: RowStatement) throws -> Statement {
        try connection.statements.slot(StatementSlot.row(entity, which), on: connection) {
            let sql = Self.rowSQL[entity]!
            return which == .select ? sql.select : sql.upsert
        }
    }

}
