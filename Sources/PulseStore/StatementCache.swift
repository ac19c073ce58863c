import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

// The statements a store prepares once and holds (its hot statements and each typed
// table's select and upsert).

extension ReplicaStore {
    /// The statements every change runs, prepared once and held here: taking them from the
    /// connection's cache would hash their SQL text on every call (perf: 4 % of a write).
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
        if let statement = hotStatements[which.rawValue] {
            statement.reset()
            return statement
        }
        let statement = try Statement(connection: connection, sql: which.sql)
        hotStatements[which.rawValue] = statement
        return statement
    }

    /// A statement of `entity`'s typed table, reset and ready to bind.
    func rowStatement(_ entity: EntityKind, _ which: RowStatement) throws -> Statement {
        let slot = entity.ordinal * 2 + which.rawValue
        if let statement = rowStatements[slot] {
            statement.reset()
            return statement
        }
        let sql = Self.rowSQL[entity]!
        let statement = try Statement(connection: connection, sql: [sql.select, sql.upsert][which.rawValue])
        rowStatements[slot] = statement
        return statement
    }

}
