import PulseModel

/// A database that went back in time (restored from a backup, a snapshot rolled back, an
/// old copy of the home put back) and how it continues without losing anything.
///
/// The rule (docs/PROTOCOL.md, "A replica that went back in time"):
/// - `published_seq` (in `meta`) is the highest change number of this replica that may have
///   left this machine. It is raised, durably, before a BATCH carrying a higher one is sent,
///   and never lowered; a restored copy holds the value it had when it was copied.
/// - A peer whose vector holds more of this replica than `published_seq` therefore knows
///   changes of this replica that this database never sent: changes of a history that was
///   lost here. The numbers after the copy were (or will be) used twice.
/// - The database then continues as a **new replica**: a fresh random id; every change of the
///   old replica that it still holds is issued again under the new id (same stamps' times,
///   same values and authors, numbered 1, 2, … in the old order), and it forgets the old id's
///   numbers, so peers send back all they hold of the old replica, the lost changes included,
///   which now merge here as another replica's. Nothing is lost on either side: the re-issued
///   changes reach every machine under a number no one has used, and the lost ones come back.
extension ReplicaStore {
    /// The highest change number of this replica that may have left this machine.
    public func publishedSeq() throws -> UInt64 {
        if let value = try meta("published_seq"), case let .integer(seq) = value { return UInt64(max(0, seq)) }
        return try ownCounter() // a database from before the rule: everything it made may have left
    }

    /// Records that changes of this replica up to `seq` may leave this machine (called before
    /// sending them). Never lowers the mark. Committed without its own fsync (SQLite's
    /// `synchronous = NORMAL` for this one commit; the next ordinary commit syncs it): it
    /// survives a crash of the process, and a power cut right after it can only make the
    /// mark too low — then the next session sees a peer holding more than the mark and the
    /// database continues as a new replica for nothing: nothing is lost (a vector entry is
    /// spent). A durable commit here cost a whole fsync on every live write (propagation
    /// p50 0.2 → 1.15 ms in the bench).
    public func markPublished(upTo seq: UInt64) throws {
        try connection.execute("PRAGMA synchronous = NORMAL")
        defer { try? connection.execute("PRAGMA synchronous = FULL") }
        try inWords {
            try connection.transaction {
                let statement = try hot(.savePublished)
                try statement.bind(Int64(seq), at: 1)
                while try statement.step() {}
                statement.reset()
            }
        }
    }

    /// What ``continueAsNewReplica()`` did.
    public struct NewReplica: Sendable, Equatable {
        public let former: ReplicaID
        public let current: ReplicaID
        /// Changes of the former replica issued again under the new one.
        public let reissued: Int
    }

    /// Continues this database as a new replica (see the type's comment), in one transaction,
    /// which also writes the new replica's own row (`replicaRow`: who it belongs to).
    public func continueAsNewReplica(newID: ReplicaID = .random(), replicaRow: RowFields) throws -> NewReplica {
        defer { localCommits &+= 1 } // its own row at least: a change to send
        return try inWords {
            try connection.transaction {
                // Another process may have done it already: work on the id the database holds now.
                if let stored = try connection.scalarInt("SELECT value FROM meta WHERE key = 'replica_id'") {
                    replicaID = ReplicaID(storage: stored)
                }
                let former = replicaID
                let clock = try lastTimestamp()
                // The former replica's changes still held here, in their order.
                var seqs: [UInt64] = []
                var rows: [RowKey] = []
                var seen = Set<RowKey>()
                try connection.query(
                    "SELECT seq, entity, row_id FROM change_index WHERE origin = ?1 ORDER BY seq",
                    [.integer(former.storage)]
                ) { statement in
                    while try statement.step() {
                        seqs.append(UInt64(statement.int(0)))
                        guard let entity = ChangeIndex.entity(code: statement.int(1)),
                            let id = ChangeIndex.id(statement, column: 2)
                        else { continue }
                        let key = RowKey(entity: entity, id: id)
                        if seen.insert(key).inserted { rows.append(key) }
                    }
                }
                // And those it keeps for a later release (KeptChanges.swift), in the same order.
                let keptSeqs: [UInt64] = try connection.query(
                    "SELECT seq FROM kept_change WHERE origin = ?1 ORDER BY seq", [.integer(former.storage)]
                ) { statement in
                    var seqs: [UInt64] = []
                    while try statement.step() { seqs.append(UInt64(statement.int(0))) }
                    return seqs
                }
                if !keptSeqs.isEmpty { seqs = Array(Set(seqs).union(keptSeqs)).sorted() }
                var renumbered: [UInt64: UInt64] = [:]
                for (index, seq) in seqs.enumerated() { renumbered[seq] = UInt64(index + 1) }
                recordsStubs = false
                defer { recordsStubs = true }
                for key in rows {
                    let before = try versions(key.entity, key.id.text)
                    var after = before
                    before.forEach { number, version in
                        guard version.stamp.origin == former, let seq = renumbered[version.seq] else { return }
                        after[number] = FieldVersion(
                            value: version.value, stamp: Stamp(hlc: version.stamp.hlc, origin: newID),
                            seq: seq, base: version.base, writer: version.writer)
                    }
                    try saveRow(key.entity, key.id, before: before, after: after)
                }
                for seq in keptSeqs {
                    try connection.statement("UPDATE kept_change SET origin = ?3, seq = ?4 WHERE origin = ?1 AND seq = ?2").run([
                        .integer(former.storage), .integer(Int64(seq)), .integer(newID.storage), .integer(Int64(renumbered[seq]!)),
                    ])
                }
                try connection.statement("DELETE FROM version_vector WHERE origin = ?1").run([.integer(former.storage)])
                // What it knew of the former history's overwritten numbers goes too: the peers' stubs come back.
                try connection.statement("DELETE FROM change_stub WHERE origin = ?1").run([.integer(former.storage)])
                try connection.statement("DELETE FROM held_coverage WHERE origin = ?1").run([.integer(former.storage)])
                for (key, value) in [("replica_id", newID.storage), ("published_seq", 0)] {
                    try connection.statement(
                        """
                        INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value
                        """
                    ).run([.text(key), .integer(value)])
                }
                replicaID = newID
                // The new replica's own row, numbered after the re-issued changes; the clock goes on.
                var writer = LocalWriter(
                    store: self, member: nil, clock: HybridClock(last: clock, maxDriftMilliseconds: maxDriftMilliseconds),
                    seq: UInt64(seqs.count), keepsChanges: false)
                try writer.put(.replica, newID.description, replicaRow)
                try saveCounterAndClock(writer.seq, writer.clock.last)
                return NewReplica(former: former, current: newID, reissued: seqs.count)
            }
        }
    }

    /// The replica id the database holds now (another process may have started a new one).
    public func refreshReplicaID() throws {
        if let stored = try connection.scalarInt("SELECT value FROM meta WHERE key = 'replica_id'") {
            replicaID = ReplicaID(storage: stored)
        }
    }
}
