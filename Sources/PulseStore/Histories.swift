import PulseModel

/// Histories that forked (docs/PROTOCOL.md §5, "Histories that forked"; protocol 9).
///
/// A change is named by `(origin, seq)`. A database put back to an older copy numbers its
/// next changes with numbers its peers may already hold for other changes: two histories
/// under one replica id. To tell them apart, every holder keeps the `hlc` of **every**
/// number it covers — of a change it holds from the row's versions (or `kept_change`), of
/// an overwritten one from `change_stub` (written here when a change loses its last field,
/// and sent as a stub with a BATCH's coverage) — and a VECTOR entry carries the stamp at
/// its number. Two holders whose stamps differ at the lower entry compare their stamps
/// (HISTORY) and find the fork point `f`; each then moves its own branch's changes `f…` to
/// a replica id derived from `(origin, f, hlc at f)` (the same id on every holder of the
/// same branch), numbered from 1, and seals the origin at `f − 1`: the origin's history
/// ends there everywhere, and the branches travel on as two replicas. A machine whose own
/// replica is sealed continues under a fresh one.
///
/// Tables (migration 18): `change_stub (origin, seq, hlc)`; `history_seal (origin, seq)`.
extension ReplicaStore {
    /// What ``healFork(of:from:into:replicaRow:)`` did.
    public struct HealedFork: Sendable, Equatable {
        public let origin: ReplicaID
        /// The first number that was re-keyed; the origin is sealed at the number before it.
        public let forkAt: UInt64
        public let branch: ReplicaID
        /// Changes and stubs moved to the branch.
        public let moved: Int
        /// This database's own replica was sealed: it continues under this new id.
        public let continuesAs: ReplicaID?
    }

    /// The stamp of change `seq` of `origin` as this database holds it; 0 when it does not
    /// know it (overwritten before migration 18, or a number it does not cover).
    public func stamp(of origin: ReplicaID, _ seq: UInt64) throws -> UInt64 {
        try Self.stamp(connection, RecordStatements(connection), of: origin, seq)
    }

    /// ``stamp(of:_:)`` on a connection (a delta reader's too).
    static func stamp(_ connection: Connection, _ records: RecordStatements, of origin: ReplicaID, _ seq: UInt64) throws -> UInt64 {
        guard seq > 0 else { return 0 }
        let located: (EntityKind, TextID)? = try connection.query(
            "SELECT entity, row_id FROM change_index WHERE origin = ?1 AND seq = ?2",
            [.integer(origin.storage), .integer(Int64(seq))]
        ) { statement in
            guard try statement.step(), let entity = ChangeIndex.entity(code: statement.int(0)), let id = ChangeIndex.id(statement, column: 1)
            else { return nil }
            return (entity, id)
        }
        if let (entity, id) = located {
            var found: UInt64 = 0
            try records.versions(entity, id)?.forEach { _, version in
                if version.stamp.origin == origin && version.seq == seq { found = UInt64(version.stamp.hlc.rawValue) }
            }
            if found > 0 { return found }
        }
        for table in ["change_stub", "kept_change"] {
            if let hlc = try connection.scalarInt(
                "SELECT hlc FROM \(table) WHERE origin = ?1 AND seq = ?2", [.integer(origin.storage), .integer(Int64(seq))]),
                hlc > 0
            {
                return UInt64(hlc)
            }
        }
        return 0
    }

    /// This database's VECTOR from protocol 9: its version vector, the stamp at each entry,
    /// and the seals.
    public func historyHeads() throws -> HistoryHeads {
        let vector = try versionVector()
        let seals = try self.seals()
        var entries: [ReplicaID: HistoryHead] = [:]
        for (origin, seq) in vector.entries {
            entries[origin] = HistoryHead(seq: seq, stamp: try stamp(of: origin, seq), seal: seals[origin])
        }
        for (origin, seal) in seals where entries[origin] == nil { entries[origin] = HistoryHead(seq: 0, seal: seal) }
        return HistoryHeads(entries)
    }

    /// Where each sealed origin's history ends.
    public func seals() throws -> [ReplicaID: UInt64] {
        try connection.query("SELECT origin, seq FROM history_seal") { statement in
            var seals: [ReplicaID: UInt64] = [:]
            while try statement.step() { seals[ReplicaID(storage: statement.int(0))] = UInt64(max(0, statement.int(1))) }
            return seals
        }
    }

    /// The stamps of `origin`'s changes 1…`upTo` as this database holds them (0: unknown).
    public func historyStamps(of origin: ReplicaID, upTo: UInt64) throws -> [UInt64] {
        precondition(upTo < 1 << 32)
        var stamps = [UInt64](repeating: 0, count: Int(upTo))
        var rows: [RowKey: [UInt64]] = [:]
        try connection.query(
            "SELECT entity, row_id FROM change_index WHERE origin = ?1 AND seq <= ?2", [.integer(origin.storage), .integer(Int64(upTo))]
        ) { statement in
            while try statement.step() {
                guard let entity = ChangeIndex.entity(code: statement.int(0)), let id = ChangeIndex.id(statement, column: 1) else { continue }
                rows[RowKey(entity: entity, id: id)] = []
            }
        }
        for key in rows.keys {
            try versions(key.entity, key.id, anyPartial: true).forEach { _, version in
                if version.stamp.origin == origin, version.seq >= 1, version.seq <= upTo {
                    stamps[Int(version.seq - 1)] = UInt64(version.stamp.hlc.rawValue)
                }
            }
        }
        for table in ["change_stub", "kept_change"] {
            try connection.query(
                "SELECT seq, hlc FROM \(table) WHERE origin = ?1 AND seq <= ?2", [.integer(origin.storage), .integer(Int64(upTo))]
            ) { statement in
                while try statement.step() {
                    let index = Int(statement.int(0) - 1)
                    if stamps[index] == 0 { stamps[index] = UInt64(max(0, statement.int(1))) }
                }
            }
        }
        return stamps
    }

    /// Records the stamp of a number whose change this database does not hold (overwritten
    /// here, or arrived already overwritten); nothing when it holds the change or the stamp.
    func recordStub(origin: ReplicaID, seq: UInt64, hlc: HybridTimestamp) throws {
        guard recordsStubs, hlc.rawValue > 0 else { return }
        try connection.statement(
            """
            INSERT OR IGNORE INTO change_stub (origin, seq, hlc) SELECT ?1, ?2, ?3
            WHERE NOT EXISTS (SELECT 1 FROM change_index WHERE origin = ?1 AND seq = ?2)
            AND NOT EXISTS (SELECT 1 FROM kept_change WHERE origin = ?1 AND seq = ?2)
            """
        ).run([.integer(origin.storage), .integer(Int64(seq)), .integer(hlc.rawValue)])
    }

    /// Moves this database's changes of `origin` numbered `f…` (rows' versions, kept changes,
    /// stubs) to `branch`, numbered from 1, lowers the origin's entry to `f − 1` and seals it
    /// there; its entry for the branch covers what it covered of the origin. Changes of the
    /// origin held for a clock ahead and numbered `f…` are dropped (their sender re-keys and
    /// sends them again). When the origin is this database's own replica, it continues under
    /// a fresh replica id (`replicaRow`: the new replica's row), numbering from 1. One
    /// transaction.
    public func healFork(of origin: ReplicaID, from f: UInt64, into branch: ReplicaID, replicaRow: RowFields) throws -> HealedFork {
        precondition(f >= 1 && branch != origin)
        defer { localCommits &+= 1 }
        return try inWords {
            try connection.transaction {
                try refreshReplicaID()
                let clock = try lastTimestamp()
                let shift = Int64(f - 1)
                var keys: [RowKey] = []
                var seen = Set<RowKey>()
                var moved = 0
                try connection.query(
                    "SELECT entity, row_id FROM change_index WHERE origin = ?1 AND seq >= ?2 ORDER BY seq",
                    [.integer(origin.storage), .integer(Int64(f))]
                ) { statement in
                    while try statement.step() {
                        moved += 1
                        guard let entity = ChangeIndex.entity(code: statement.int(0)), let id = ChangeIndex.id(statement, column: 1) else { continue }
                        let key = RowKey(entity: entity, id: id)
                        if seen.insert(key).inserted { keys.append(key) }
                    }
                }
                recordsStubs = false
                defer { recordsStubs = true }
                for key in keys {
                    let before = try versions(key.entity, key.id, anyPartial: true)
                    var after = before
                    before.forEach { number, version in
                        guard version.stamp.origin == origin, version.seq >= f else { return }
                        after[number] = FieldVersion(
                            value: version.value, stamp: Stamp(hlc: version.stamp.hlc, origin: branch),
                            seq: version.seq - UInt64(shift), base: version.base, writer: version.writer)
                    }
                    try saveRow(key.entity, key.id, before: before, after: after)
                }
                try connection.flushHeld()
                for table in ["change_stub", "kept_change"] {
                    try connection.statement("UPDATE \(table) SET origin = ?3, seq = seq - ?4 WHERE origin = ?1 AND seq >= ?2").run([
                        .integer(origin.storage), .integer(Int64(f)), .integer(branch.storage), .integer(shift),
                    ])
                    moved += connection.changes
                }
                try connection.statement("DELETE FROM held_change WHERE origin = ?1 AND seq >= ?2").run([
                    .integer(origin.storage), .integer(Int64(f)),
                ])
                try connection.statement("DELETE FROM held_coverage WHERE origin = ?1").run([.integer(origin.storage)])
                let covered = try versionVector()[origin]
                if covered >= f {
                    try saveVersion(branch, covered - UInt64(shift))
                    if shift > 0 {
                        try saveVersion(origin, UInt64(shift))
                    } else {
                        try connection.statement("DELETE FROM version_vector WHERE origin = ?1").run([.integer(origin.storage)])
                    }
                }
                try saveSeal(origin, UInt64(shift))
                let continuesAs = origin == replicaID ? try continueAsFreshReplica(replicaRow: replicaRow, clock: clock) : nil
                return HealedFork(origin: origin, forkAt: f, branch: branch, moved: moved, continuesAs: continuesAs)
            }
        }
    }

    /// Records that `origin`'s history ends at `seq` (a peer healed a fork of it), where this
    /// database holds nothing of it beyond; its own replica continues under a fresh id.
    /// Nil unless it did.
    public func adoptSeal(of origin: ReplicaID, at seq: UInt64, replicaRow: RowFields) throws -> ReplicaID? {
        defer { localCommits &+= 1 }
        return try inWords {
            try connection.transaction {
                try refreshReplicaID()
                let entry = try versionVector()[origin]
                precondition(entry <= seq, "a seal below this database's entry: heal the fork instead")
                try saveSeal(origin, seq)
                return origin == replicaID ? try continueAsFreshReplica(replicaRow: replicaRow, clock: try lastTimestamp()) : nil
            }
        }
    }

    private func saveSeal(_ origin: ReplicaID, _ seq: UInt64) throws {
        try connection.statement(
            """
            INSERT INTO history_seal (origin, seq) VALUES (?1, ?2)
            ON CONFLICT (origin) DO UPDATE SET seq = min(seq, excluded.seq)
            """
        ).run([.integer(origin.storage), .integer(Int64(seq))])
    }

    /// Inside a transaction: a fresh replica id for this database's next changes, numbered
    /// from 1, its clock going on, with its `replica` row; the former one's changes stay
    /// under it (sealed), so nothing is issued again.
    private func continueAsFreshReplica(replicaRow: RowFields, clock: HybridTimestamp) throws -> ReplicaID {
        let fresh = ReplicaID.random()
        for (key, value) in [("replica_id", fresh.storage), ("published_seq", 0)] {
            try connection.statement(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ).run([.text(key), .integer(value)])
        }
        replicaID = fresh
        var writer = LocalWriter(
            store: self, member: nil, clock: HybridClock(last: clock, maxDriftMilliseconds: maxDriftMilliseconds), seq: 0, keepsChanges: false)
        try writer.put(.replica, fresh.description, replicaRow)
        try saveCounterAndClock(writer.seq, writer.clock.last)
        return fresh
    }

    /// A batch's change (or stub) under a number this database already covers, with another
    /// stamp than the one it holds there: a second history under one replica id, met by
    /// receiving it (two sessions bringing the two branches at once: the VECTORs of neither
    /// showed it). Refused whole (ERROR 5): the next session's VECTORs show the fork, and it
    /// is healed there. Only numbers already covered are looked at (a relay's duplicates).
    func refuseAnotherHistory(_ batch: DeltaBatch, covered vector: VersionVector, heldBack: Set<Int>) throws {
        func check(_ origin: ReplicaID, _ seq: UInt64, _ hlc: UInt64) throws {
            guard origin != replicaID, seq <= vector[origin] else { return }
            let held = try stamp(of: origin, seq)
            if held != 0 && held != hlc { throw StoreError.anotherHistory(origin: origin, seq: seq) }
        }
        for offset in batch.changes.indices where !heldBack.contains(offset) {
            try check(batch.changes[offset].origin, batch.changes[offset].seq, UInt64(batch.changes[offset].hlc.rawValue))
        }
        for stub in batch.stubs { try check(stub.origin, stub.seq, stub.hlc) }
        // A claim that continues another history than the one held up to its start.
        for claim in batch.coverage where claim.afterCheck != 0 && claim.origin != replicaID && claim.after <= vector[claim.origin] {
            let held = HistoryHead.check(try stamp(of: claim.origin, claim.after))
            if held != 0 && held != claim.afterCheck { throw StoreError.anotherHistory(origin: claim.origin, seq: claim.after) }
        }
    }

    /// The changes, kept changes, stubs and coverage of a batch beyond a seal (a peer that has
    /// not yet learnt that the history ended there): refused whole.
    func refuseBeyondSeals(_ batch: DeltaBatch) throws {
        let seals = try self.seals()
        guard !seals.isEmpty else { return }
        func check(_ origin: ReplicaID, _ seq: UInt64) throws {
            if let seal = seals[origin], seq > seal { throw StoreError.beyondSeal(origin: origin, seq: seq, seal: seal) }
        }
        for change in batch.changes { try check(change.origin, change.seq) }
        for change in batch.kept { try check(change.origin, change.seq) }
        for stub in batch.stubs { try check(stub.origin, stub.seq) }
        for claim in batch.coverage { try check(claim.origin, claim.upTo) }
    }
}

extension Migrations {
    /// Migration 18 (protocol 9, fork-safe histories): the stamps of numbers whose changes
    /// are overwritten, and where forked histories end (Histories.swift).
    static let migration18 = """
        CREATE TABLE change_stub (
            origin INTEGER NOT NULL CHECK (origin <> 0),
            seq INTEGER NOT NULL CHECK (seq > 0),
            hlc INTEGER NOT NULL CHECK (hlc > 0),
            PRIMARY KEY (origin, seq)
        ) WITHOUT ROWID;
        CREATE TABLE history_seal (
            origin INTEGER PRIMARY KEY NOT NULL CHECK (origin <> 0),
            seq INTEGER NOT NULL CHECK (seq >= 0)
        );
        """
}
