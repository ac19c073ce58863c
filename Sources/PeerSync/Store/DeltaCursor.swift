/// Streams what one replica holds that a peer lacks, in bounded batches, from one
/// consistent snapshot of the database (a read transaction on a connection of its own).
///
/// For each replica `o` with `snapshot[o] > peer[o]`, it reads the field versions
/// numbered above `peer[o]`, in change order, grouping the fields of one change
/// together. Numbers that no longer appear were superseded by later writes, which the
/// same snapshot holds, so the last batch of `o` may claim coverage up to `snapshot[o]`.
/// Memory stays bounded by the batch size, whatever the database size.
public final class DeltaCursor {
    private let connection: Connection
    private let batchLimit: Int
    private var pending: [(origin: ReplicaID, after: UInt64, upTo: UInt64)]
    private var finished = false
    /// The snapshot's version vector: what the peer holds once it applied every batch.
    public let snapshotVector: VersionVector

    init(path: String, peerVector: VersionVector, batchLimit: Int) throws {
        precondition(batchLimit > 0)
        connection = try Connection(path: path, mode: .readOnly)
        self.batchLimit = batchLimit
        try connection.execute("BEGIN DEFERRED")
        // The first read fixes the snapshot.
        snapshotVector = try ReplicaStore.readVersionVector(connection)
        pending = snapshotVector.entries
            .filter { $0.value > peerVector[$0.key] }
            .sorted { $0.key < $1.key }
            .map { (origin: $0.key, after: peerVector[$0.key], upTo: $0.value) }
    }

    deinit {
        if connection.isInTransaction { try? connection.execute("COMMIT") }
    }

    /// The number of changes (by numbering) the peer lacks in all.
    public var lagCount: UInt64 { pending.reduce(0) { $0 + ($1.upTo - $1.after) } }

    /// The next batch, or nil when the peer has been given everything.
    public func next() throws -> DeltaBatch? {
        guard !finished else { return nil }
        var batch = DeltaBatch()
        while let range = pending.first, batch.changes.count < batchLimit {
            let (changes, exhausted) = try read(origin: range.origin, after: range.after, upTo: range.upTo,
                                                limit: batchLimit - batch.changes.count)
            batch.changes += changes
            if !exhausted, let last = changes.last {
                // The batch is full before this replica's changes end.
                batch.coverage.append(Coverage(origin: range.origin, after: range.after, upTo: last.seq))
                pending[0].after = last.seq
                break
            }
            batch.coverage.append(Coverage(origin: range.origin, after: range.after, upTo: range.upTo))
            pending.removeFirst()
        }
        if pending.isEmpty {
            finished = true
            if connection.isInTransaction { try connection.execute("COMMIT") }
        }
        return batch.isEmpty ? nil : batch
    }

    /// Up to `limit` changes of `origin` numbered in `(after, upTo]`, each complete, and
    /// whether they are all there are.
    private func read(origin: ReplicaID, after: UInt64, upTo: UInt64, limit: Int) throws -> ([Change], Bool) {
        // Fetch rows (fields) and group them into changes; keep reading past the limit
        // until the last change is complete.
        return try connection.query("""
            SELECT seq, hlc, member, entity, row_id, field, value, base_hlc, base_origin
            FROM field_version WHERE origin = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq
            """, [.integer(origin.storage), .integer(Int64(after)), .integer(Int64(upTo))]) { statement in
        var changes: [Change] = []
        var current: (seq: UInt64, hlc: Int64, member: String?, entity: EntityKind, rowID: String, fields: [FieldWrite])?
        func flush() {
            guard let c = current else { return }
            changes.append(Change(origin: origin, seq: c.seq, hlc: HybridTimestamp(rawValue: c.hlc), member: c.member,
                                  entity: c.entity, rowID: c.rowID, fields: c.fields.sorted { $0.field < $1.field }))
            current = nil
        }
        var exhausted = true
        while try statement.step() {
            let seq = UInt64(statement.int(0))
            if current?.seq != seq {
                flush()
                if changes.count >= limit {
                    exhausted = false
                    break
                }
                guard let entity = EntityKind(rawValue: statement.text(3)) else { continue }
                current = (seq, statement.int(1), statement.optionalText(2), entity, statement.text(4), [])
            }
            let base = statement.optionalInt(7).map {
                Stamp(hlc: HybridTimestamp(rawValue: $0), origin: ReplicaID(storage: statement.int(8)))
            }
            current?.fields.append(FieldWrite(field: statement.text(5), value: statement.value(6), base: base))
        }
        flush()
        return (changes, exhausted)
        }
    }
}
