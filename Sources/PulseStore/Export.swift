import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

// What leaves the store whole: deltas for a peer, the canonical export, the integrity check.

extension ReplicaStore {

    /// A cursor over everything this replica holds that a peer with `peerVector` lacks,
    /// cut into batches of at most `batchLimit` changes and about `byteLimit` bytes. It reads one consistent
    /// snapshot on its own connection, so local writes may go on meanwhile.
    public func deltas(
        for peerVector: VersionVector, batchLimit: Int = DeltaCursor.defaultBatchLimit,
        byteLimit: Int = DeltaCursor.defaultByteLimit
    ) throws -> DeltaCursor {
        try DeltaCursor(path: path, peerVector: peerVector, batchLimit: batchLimit, byteLimit: byteLimit)
    }

    /// This replica's own changes numbered after `seq` (what was committed here since), and the
    /// number they go up to: read on the store's connection, in one read transaction of its
    /// own. A cursor of ``deltas(for:batchLimit:byteLimit:)`` opens a connection (the file, the
    /// schema parsed): ≈ 0.85 ms of every local write's events, spent while the write was on
    /// its way to the peers on the same two cores (propagation's p99: issue 54).
    public func ownChanges(after seq: UInt64) throws -> (changes: [Change], upTo: UInt64) {
        precondition(!connection.isInTransaction, "ownChanges reads in a transaction of its own")
        var vector = try versionVector()
        guard vector[replicaID] > seq else { return ([], max(seq, vector[replicaID])) }
        vector[replicaID] = seq
        let cursor = try DeltaCursor(
            connection: connection, records: RecordStatements(connection), peerVector: vector,
            batchLimit: DeltaCursor.defaultBatchLimit, byteLimit: DeltaCursor.defaultByteLimit)
        var changes: [Change] = []
        while let batch = try cursor.next() { changes += batch.changes.filter { $0.origin == replicaID } }
        return (changes, cursor.snapshotVector[replicaID])
    }

    /// Every field of every row, as `entity → row id → field → value`. Two replicas
    /// that have seen the same changes return equal values.
    public func canonicalState() throws -> [EntityKind: [String: [String: FieldValue]]] {
        var state: [EntityKind: [String: [String: FieldValue]]] = [:]
        for entity in EntityKind.allCases {
            let names = entity.schema.fieldNames.joined(separator: ", ")
            try connection.query("SELECT id, versions, \(names) FROM \(entity.rawValue)") { statement in
                while try statement.step() {
                    let rowID = statement.text(0)
                    state[entity, default: [:]][rowID] = try Self.decodeVersions(
                        statement, column: 1, entity: entity, rowID: rowID,
                        typedColumns: 2
                    ).values
                }
            }
        }
        try connection.query("SELECT entity, row_id, versions FROM partial_row") { statement in
            while try statement.step() {
                guard let entity = EntityKind(rawValue: statement.text(0)) else { continue }
                let rowID = statement.text(1)
                state[entity, default: [:]][rowID] = try Self.decodeVersions(
                    statement, column: 2, entity: entity, rowID: rowID,
                    typedColumns: nil
                ).values
            }
        }
        return state
    }

    /// Checks the database file: SQLite's own integrity check.
    public func integrityCheck() throws -> String {
        try connection.query("PRAGMA integrity_check") { statement in
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(0)) }
            return lines.joined(separator: "\n")
        }
    }
}
