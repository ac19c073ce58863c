import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

/// What applying a batch did.
public struct ApplyOutcome: Sendable {
    /// Changes of the batch that changed at least one field here.
    public var applied: [Change] = []
    /// Changes already known (or entirely superseded here).
    public var ignored = 0
    public var conflicts = 0
    /// Changes stamped too far ahead of this clock, kept to be merged later (``HeldChange``).
    public var held: [Change] = []
    /// Changes (or parts of changes) of a later release's entities and fields, kept and
    /// relayed, never shown (KeptChanges.swift): how many were new here.
    public var kept = 0
    /// The version vector after the batch.
    public var versionVector = VersionVector()
}

extension ReplicaStore {

    /// Applies a batch of remote changes atomically: all of it, or (on any invalid
    /// change) none of it. Idempotent, and commutative with other batches: the merge is
    /// per-field last-writer-wins by ``Stamp``.
    @discardableResult
    public func apply(_ batch: DeltaBatch) throws -> ApplyOutcome {
        // Validate everything before touching the database; set aside what is stamped too
        // far ahead of this clock (held, not merged: see HeldChanges.swift).
        let now = physicalClock()
        let checker = HybridClock(maxDriftMilliseconds: maxDriftMilliseconds)
        var holdBack: [Change] = [], heldBack: Set<Int> = []
        // Changes holding fields of a later release (an open schema: KeptChanges.swift), by
        // position: the part this release knows (nil: none) and the part it keeps.
        var split: [Int: (known: Change?, kept: KeptChange)] = [:]
        for change in batch.kept {
            do throws(ChangeValidationError) { try change.validate() } catch {
                throw StoreError.invalidChange(error, origin: change.origin, seq: change.seq)
            }
        }
        // Through a buffer pointer, here and below: a change is read where it is (iterating,
        // or the array's subscript, copied each: a retain and a release of each string).
        try batch.changes.withUnsafeBufferPointer { changes in
            for position in changes.indices {
                let unknownFields: Bool
                do throws(ChangeValidationError) { unknownFields = try changes[position].entity.schema.validateOpen(changes[position]) } catch {
                    throw StoreError.invalidChange(error, origin: changes[position].origin, seq: changes[position].seq)
                }
                if unknownFields { split[position] = Self.split(changes[position]) }
                if (try? checker.check(remote: changes[position].hlc, physicalMilliseconds: now)) == nil {
                    holdBack.append(changes[position])
                    heldBack.insert(position)
                }
            }
        }
        // Any refusal of SQLite's (a rule of the database) is a refused batch, in words.
        return try inWords {
            do {
                return try connection.transaction {
                    try refuseBeyondSeals(batch)
                    var outcome = ApplyOutcome()
                    var clock = HybridClock(last: try lastTimestamp(), maxDriftMilliseconds: maxDriftMilliseconds)
                    var vv = try versionVector()
                    // Each row touched by the batch is read once, merged in memory, and written and
                    // projected once at the end, in key order (B-tree locality). The rows stay where
                    // they were put; only their positions are sorted (moving the rows themselves cost
                    // a quarter of the merge's time in retains and releases).
                    var rows: [TouchedRow] = []
                    var position: [RowKey: Int] = [:]
                    rows.reserveCapacity(batch.changes.count)
                    position.reserveCapacity(batch.changes.count)
                    // Usually no row waits for fields: then a row the typed table lacks is new, and
                    // `partial_row` is not probed for each (the rows this batch leaves partial are
                    // written at the end, and met again through `position` before that).
                    let anyPartial = try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM partial_row)") == 1
                    // Then, too, a row whose id sorts after every id of its typed table (row ids are
                    // time-ordered: a catch-up brings mostly such rows) is new without being looked
                    // for: each table's largest id is read once, when the batch first meets the table.
                    var lastIDs = LastRowIDs()
                    for change in batch.kept where change.origin == replicaID && change.seq > vv[replicaID] {
                        throw StoreError.foreignOwnChange(seq: change.seq)
                    }
                    for change in holdBack {
                        if change.origin == replicaID && change.seq > vv[replicaID] {
                            throw StoreError.foreignOwnChange(seq: change.seq)
                        }
                        try hold(change)
                    }
                    outcome.held = holdBack
                    try refuseAnotherHistory(batch, covered: vv, heldBack: heldBack)
                    let holding = holdBack.isEmpty ? try heldOrigins() : try heldOrigins().union(holdBack.map(\.origin))
                    // The changes applied are the batch's own array, shared, unless some are not.
                    var notApplied = heldBack
                    try batch.changes.withUnsafeBufferPointer { changes in
                        for offset in changes.indices where heldBack.isEmpty || !heldBack.contains(offset) {
                            if changes[offset].origin == replicaID && changes[offset].seq > vv[replicaID] {
                                throw StoreError.foreignOwnChange(seq: changes[offset].seq)
                            }
                            try clock.observe(remote: changes[offset].hlc, physicalMilliseconds: now)
                            var knownPart: Change?
                            if let parts = split[offset] {
                                // Merged below: the fields this release knows, if any.
                                guard let known = parts.known else {
                                    notApplied.insert(offset)
                                    continue
                                }
                                knownPart = known
                            }
                            let key = RowKey(entity: changes[offset].entity, id: changes[offset].row)
                            // One hash and one probe: the row's position, or the next one claimed
                            // (a lookup, then an insert, cost two of each).
                            let (index, first) = Self.claim(&position[key, default: -1], next: rows.count)
                            if first {
                                let entity = changes[offset].entity
                                let new = try !anyPartial && lastIDs.sortsAfterEveryRow(entity, key.id, connection)
                                rows.append(
                                    TouchedRow(
                                        key: key,
                                        new
                                            ? VersionedRow(entity.schema)
                                            : try versions(entity, key.id, anyPartial: anyPartial)))
                            }
                            // Merged in place: the array holds the only copy.
                            if try merge(knownPart ?? changes[offset], into: &rows[index].current, &outcome) {
                                rows[index].changed = true
                            } else {
                                outcome.ignored += 1
                                notApplied.insert(offset)
                            }
                        }
                    }
                    let changes = batch.changes
                    outcome.applied =
                        notApplied.isEmpty && split.isEmpty
                        ? changes : changes.indices.filter { !notApplied.contains($0) }.map { split[$0]?.known ?? changes[$0] }
                    // Sorted on a fixed-width prefix of each key (the table, then the row id's first
                    // bytes), not on the keys: comparing their strings in the sort cost a seventh of
                    // the apply in retains and releases. Any order is correct (each row is written
                    // once); this one is the tables' own but for ids sharing seven bytes.
                    var order: [(prefix: UInt64, index: Int)] = []
                    order.reserveCapacity(rows.count)
                    for index in rows.indices where rows[index].changed { order.append((rows[index].key.sortPrefix, index)) }
                    order.sort { $0.prefix != $1.prefix ? $0.prefix < $1.prefix : $0.index < $1.index }
                    for (_, index) in order {
                        // A row read as absent (from both tables) is inserted, not upserted: an
                        // upsert probes the key before it inserts, one B-tree descent more.
                        try saveRow(
                            rows[index].key.entity, rows[index].key.id, before: rows[index].original, after: rows[index].current,
                            fresh: rows[index].original.isEmpty)
                    }
                    // What this release does not know: kept, whole, to relay and to make live later.
                    var kept = batch.kept
                    for (position, parts) in split where !heldBack.contains(position) { kept.append(parts.kept) }
                    outcome.kept = try keep(kept)
                    // The stamps of numbers that arrived overwritten (Histories.swift): stubs, and
                    // changes that took no field here.
                    if !batch.stubs.isEmpty || outcome.ignored > 0 {
                        try connection.flushHeld()
                        for stub in batch.stubs {
                            try recordStub(origin: stub.origin, seq: stub.seq, hlc: HybridTimestamp(rawValue: Int64(stub.hlc)))
                        }
                        for offset in notApplied where !heldBack.contains(offset) {
                            try recordStub(origin: changes[offset].origin, seq: changes[offset].seq, hlc: changes[offset].hlc)
                        }
                    }
                    var advanced = false
                    for claim in batch.coverage {
                        if claim.origin == replicaID {
                            if claim.upTo > vv[replicaID] { throw StoreError.foreignOwnChange(seq: claim.upTo) }
                            continue
                        }
                        let current = vv[claim.origin]
                        if holding.contains(claim.origin) {
                            // Nothing of an origin is claimed while some of its changes are held:
                            // the claim waits in `held_coverage` until the last of them is merged.
                            let reach = max(current, try heldCoverage(claim.origin))
                            if claim.after <= reach && claim.upTo > reach { try saveHeldCoverage(claim.origin, claim.upTo) }
                        } else if claim.after <= current && claim.upTo > current {
                            advanced = true
                            vv[claim.origin] = claim.upTo
                            try saveVersion(claim.origin, claim.upTo)
                        }
                    }
                    // A batch that changed nothing (a duplicate relayed by another peer) writes
                    // nothing, so its commit costs no fsync.
                    if !outcome.applied.isEmpty || advanced || outcome.kept > 0 { try saveClock(clock.last) }
                    outcome.versionVector = vv
                    return outcome
                }
            } catch let error as SQLiteError where error.code & 0xFF != 5 && error.code & 0xFF != 13 && error.code & 0xFF != 10 {
                throw StoreError.sqlite(error)
            }
        }
    }

    /// A change of a known entity holding fields of a later release: the fields this release
    /// knows (nil when none), and the others, kept under the change's own number and stamps.
    static func split(_ change: Change) -> (known: Change?, kept: KeptChange) {
        let schema = change.entity.schema
        let known = change.fields.filter { schema.number(of: $0.field) != nil }
        let unknown = change.fields.filter { schema.number(of: $0.field) == nil }
        return (
            known.isEmpty
                ? nil
                : Change(
                    origin: change.origin, seq: change.seq, hlc: change.hlc, writer: change.writer, entity: change.entity,
                    row: change.row, fields: known),
            KeptChange(
                origin: change.origin, seq: change.seq, hlc: change.hlc, writer: change.writer, code: change.entity.code,
                row: change.row, fields: unknown)
        )
    }

    /// `slot`'s position, or `next` stored in it when it holds none yet (-1).
    @inline(__always) private static func claim(_ slot: inout Int, next: Int) -> (index: Int, first: Bool) {
        if slot >= 0 { return (slot, false) }
        slot = next
        return (next, true)
    }

    /// Merges one change into a row by the pure rule (``RowMerge``) and logs the conflicts
    /// it reports; true when at least one field took the change's value.
    func merge(_ change: Change, into row: inout VersionedRow, _ outcome: inout ApplyOutcome) throws -> Bool {
        let merged: RowMerge.Merged
        do {
            merged = try RowMerge.merge(change, into: &row)
        } catch {
            throw StoreError.invalidChange(error.validationError(change.entity), origin: change.origin, seq: change.seq)
        }
        for conflict in merged.conflicts {
            try logConflict(conflict.kind, change.entity, change.rowID, conflict.field, kept: conflict.kept, lost: conflict.lost)
        }
        outcome.conflicts += merged.conflicts.count
        return merged.changed
    }

    // MARK: - Versions and the clock

    func saveVersion(_ origin: ReplicaID, _ seq: UInt64) throws {
        try connection.statement("INSERT INTO version_vector (origin, seq) VALUES (?1, ?2) ON CONFLICT(origin) DO UPDATE SET seq = excluded.seq")
            .run([.integer(origin.storage), .integer(Int64(seq))])
    }

    /// The clock goes into this replica's row of `version_vector` (the page a commit that
    /// advances the vector writes anyway), or into `meta` while there is no such row.
    func saveClock(_ last: HybridTimestamp) throws {
        let statement = try hot(.saveClock)
        try statement.bind(replicaID.storage, at: 1)
        try statement.bind(last.rawValue, at: 2)
        while try statement.step() {}
        statement.reset()
        if connection.changes == 0 { try setMeta("hlc", .integer(last.rawValue)) }
    }
}
