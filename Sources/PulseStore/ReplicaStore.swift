import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

/// A record of the conflict log: a merge kept one value of a field and dropped another.
public struct ConflictRecord: Sendable, Hashable {
    public typealias Kind = ConflictKind
    public typealias Side = ConflictSide

    public let id: Int64
    public let kind: Kind
    public let entity: EntityKind
    public let rowID: String
    public let field: String
    public let kept: Side
    public let lost: Side
}

/// What applying a batch did.
public struct ApplyOutcome: Sendable {
    /// Changes of the batch that changed at least one field here.
    public var applied: [Change] = []
    /// Changes already known (or entirely superseded here).
    public var ignored = 0
    public var conflicts = 0
    /// Changes stamped too far ahead of this clock, kept to be merged later (``HeldChange``).
    public var held: [Change] = []
    /// The version vector after the batch.
    public var versionVector = VersionVector()
}

/// The replicated store of one household database: local writes, remote batches,
/// version vectors, deltas and the canonical export. Knows the model and SQLite;
/// nothing of the network.
///
/// Threading rule: not `Sendable`. One owner (the CLI command, or the agent's store
/// actor) uses it at a time. Several *processes* may write the same database: every
/// write transaction re-reads the clock and the change counter under SQLite's write lock.
public final class ReplicaStore {
    public let path: String
    /// This database's replica id; a new one when it went back in time (Rewind.swift).
    public internal(set) var replicaID: ReplicaID
    /// The file this store has open (the agent checks it is still the one at `path`).
    public let file: DatabaseFile
    let connection: Connection
    let physicalClock: @Sendable () -> Int64
    public let maxDriftMilliseconds: Int64
    /// Whether a local write also records its changes as published (Rewind.swift): set by
    /// the agent once a peer's vector showed this database did not go back in time, since
    /// what it writes then leaves at once.
    public var publishesWrites = false

    public static let fileName = "household.sqlite"
    /// The page cache of the writing connection, in KiB.
    public static let cacheKibibytes = 16_384

    /// The wall clock in Unix milliseconds.
    public static let systemClock: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Opens (creating if needed) the database at `path`, migrating it to the latest schema.
    /// `newReplicaID` is the id a new database takes (tests pass one to be reproducible);
    /// an existing database keeps its own.
    public init(path: String,
                physicalClock: @escaping @Sendable () -> Int64 = ReplicaStore.systemClock,
                maxDriftMilliseconds: Int64 = HybridClock.defaultMaxDriftMilliseconds,
                newReplicaID: ReplicaID? = nil) throws {
        self.path = path
        self.physicalClock = physicalClock
        self.maxDriftMilliseconds = maxDriftMilliseconds
        // A damaged file is refused before SQLite reads it (and so before anything is
        // synced from it).
        if !Connection.isOpen(path) { try DatabaseFile.checkBeforeOpening(path) }
        let connection = try Connection(path: path)
        self.connection = connection
        self.file = try DatabaseFile.current(path)
        do {
            // WAL: readers never block the writer. synchronous=FULL: a commit is on disk
            // (the WAL is fsynced) before it returns, so an acknowledged write survives
            // power loss, not only a crash of the process.
            // Set once, when the database is made; asking takes no lock.
            if try connection.query("PRAGMA journal_mode", [], { try $0.step() ? $0.text(0) : "" }) != "wal" {
                try connection.execute("PRAGMA journal_mode = WAL")
            }
            try connection.execute("PRAGMA synchronous = FULL")
            try connection.execute("PRAGMA trusted_schema = OFF")
            // A batch of 1000 changes dirties pages of four B-trees (versions, change
            // index, typed row, its index) at random places; with SQLite's default 2 MiB
            // cache a batch spills pages mid-transaction and re-reads them. The cache
            // grows only as used: an idle agent does not hold it.
            try connection.execute("PRAGMA cache_size = -\(Self.cacheKibibytes)")
            // Opening to read takes no write lock (WAL readers never wait for a writer):
            // only a database that needs a migration or has no replica id yet is written.
            if try Migrations.isCurrent(connection),
               let stored = try connection.scalarInt("SELECT value FROM meta WHERE key = 'replica_id'") {
                self.replicaID = ReplicaID(storage: stored)
                return
            }
            try Migrations.migrate(connection)
            self.replicaID = try connection.transaction {
                if let stored = try connection.scalarInt("SELECT value FROM meta WHERE key = 'replica_id'") {
                    return ReplicaID(storage: stored)
                }
                let fresh = newReplicaID ?? ReplicaID.random()
                try connection.statement("INSERT INTO meta (key, value) VALUES ('replica_id', ?1)")
                    .run([.integer(fresh.storage)])
                return fresh
            }
        } catch let error as SQLiteError where error.code & 0xFF == 26 /* SQLITE_NOTADB */ {
            throw StoreError.notReplicaDatabase(path: path)
        }
    }

    /// Runs `body`, turning the SQLite errors a person can act on into words: another
    /// process holding the write lock, a full disk.
    func inWords<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            let primary = error.code & 0xFF
            if primary == 5 /* SQLITE_BUSY */ {
                throw StoreError.busy(path: path, holder: LockHolder.describe(database: path))
            }
            if primary == 13 /* SQLITE_FULL */ || (primary == 10 /* SQLITE_IOERR */ && connection.systemErrno == ENOSPC) {
                throw StoreError.diskFull(directory: String(path.prefix(upTo: path.lastIndex(of: "/") ?? path.endIndex)))
            }
            throw error
        }
    }

    // MARK: - Reading state

    public func versionVector() throws -> VersionVector {
        try Self.readVersionVector(connection)
    }

    static func readVersionVector(_ connection: Connection) throws -> VersionVector {
        try connection.query("SELECT origin, seq FROM version_vector") { statement in
            var entries: [ReplicaID: UInt64] = [:]
            while try statement.step() {
                entries[ReplicaID(storage: statement.int(0))] = UInt64(statement.int(1))
            }
            return VersionVector(entries)
        }
    }

    /// The number of this replica's last change (0 before its first).
    func ownCounter() throws -> UInt64 {
        let statement = try hot(.selectCounter)
        try statement.bind(replicaID.storage, at: 1)
        defer { statement.reset() }
        return try statement.step() ? UInt64(statement.int(0)) : 0
    }

    /// The last hybrid timestamp this replica issued or observed.
    public func lastTimestamp() throws -> HybridTimestamp {
        // In this replica's row of `version_vector`, or in `meta` before it has one (migration 9).
        let statement = try hot(.selectClock)
        try statement.bind(replicaID.storage, at: 1)
        defer { statement.reset() }
        return HybridTimestamp(rawValue: try statement.step() ? statement.int(0) : 0)
    }

    public func meta(_ key: String) throws -> FieldValue? {
        try Self.meta(connection, key)
    }

    static func meta(_ connection: Connection, _ key: String) throws -> FieldValue? {
        try connection.query("SELECT value FROM meta WHERE key = ?1", [.text(key)]) { try $0.step() ? $0.value(0) : nil }
    }

    /// Local, unreplicated settings of this database (household id, this machine's member…).
    public func setMeta(_ key: String, _ value: FieldValue) throws {
        try inWords { try connection.statement("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            .run([.text(key), value]) }
    }

    /// Removes a local setting (nothing when it is absent).
    public func removeMeta(_ key: String) throws {
        try inWords { try connection.statement("DELETE FROM meta WHERE key = ?1").run([.text(key)]) }
    }

    /// The current value of one field, or nil when the field was never written.
    public func value(_ entity: EntityKind, _ rowID: String, _ field: String) throws -> FieldValue? {
        try versions(entity, rowID)[field: field]?.value
    }

    /// All fields of one row that have arrived so far.
    public func row(_ entity: EntityKind, _ rowID: String) throws -> [String: FieldValue] {
        try versions(entity, rowID).values
    }

    // MARK: - Local writes

    /// Runs `body` as one durable transaction of local writes by `member`. Each `put`
    /// becomes one change, numbered and stamped; nothing is visible to others, and
    /// nothing is reported done, before the commit is on disk.
    @discardableResult
    /// `waitForWriters: false`: fail at once (``StoreError/busy(path:holder:)``) when another
    /// process holds the write lock, instead of waiting for it.
    ///
    /// Returns `body`'s result and the changes made; `keepingChanges: false` returns no
    /// changes, for a caller that has no use for them: each is let go as soon as it is
    /// written, where keeping them held every change of a large transaction in memory until
    /// its commit (10 000 new items: ≈ 2 MB, out of the caches; the batched write took ≈ 7 %
    /// longer).
    public func write<T>(member: String?, waitForWriters: Bool = true, keepingChanges: Bool = true,
                         _ body: (inout LocalWriter) throws -> T) throws -> (T, [Change]) {
        if !waitForWriters { connection.setBusyTimeout(0) }
        defer { if !waitForWriters { connection.setBusyTimeout(Connection.busyTimeoutMilliseconds) } }
        return try inWords { try connection.transaction {
            // Another process may have started a new replica since this one opened (Rewind.swift).
            let current = try hot(.selectReplicaID)
            if try current.step() { replicaID = ReplicaID(storage: current.int(0)) }
            current.reset()
            var writer = LocalWriter(store: self, member: member,
                                     clock: HybridClock(last: try lastTimestamp(), maxDriftMilliseconds: maxDriftMilliseconds),
                                     seq: try ownCounter(), keepsChanges: keepingChanges)
            let first = writer.seq
            let result = try body(&writer)
            if writer.seq != first {
                try saveCounterAndClock(writer.seq, writer.clock.last)
                if publishesWrites {
                    let mark = try hot(.savePublished)
                    try mark.bind(Int64(writer.seq), at: 1)
                    while try mark.step() {}
                    mark.reset()
                }
            }
            return (result, writer.changes)
        } }
    }

    /// This replica's counter and clock, in its row of `version_vector`: one page for both.
    func saveCounterAndClock(_ seq: UInt64, _ clock: HybridTimestamp) throws {
        let statement = try hot(.saveCounterAndClock)
        try statement.bind(replicaID.storage, at: 1)
        try statement.bind(Int64(seq), at: 2)
        try statement.bind(clock.rawValue, at: 3)
        while try statement.step() {}
        statement.reset()
    }

    /// The handle through which a local transaction writes rows.
    public struct LocalWriter {
        package let store: ReplicaStore
        package let member: String?
        package var clock: HybridClock
        package var seq: UInt64
        /// The changes made so far (none kept when the write was told it need not).
        public private(set) var changes: [Change] = []
        /// The author as the record keeps it: parsed once for the transaction's changes.
        private let writer: TextID?
        /// Whether the author has passed validation (with the first change that succeeded).
        private var memberChecked = false
        /// Whether `changes` keeps each change made (``ReplicaStore/write(member:waitForWriters:keepingChanges:_:)``).
        private let keepsChanges: Bool

        init(store: ReplicaStore, member: String?, clock: HybridClock, seq: UInt64, keepsChanges: Bool = true) {
            self.keepsChanges = keepsChanges
            self.store = store
            self.member = member
            self.clock = clock
            self.seq = seq
            self.writer = member.map(TextID.init)
        }

        /// Sets `fields` of one row (creating it when new): one change.
        @discardableResult
        public mutating func put(_ entity: EntityKind, _ rowID: String, _ fields: RowFields) throws -> Change {
            try put(entity, rowID, fields, stamp: nil, fresh: false)
        }

        /// Creates a row under an id just drawn with ``RowIDRules/newRowID()``: one change,
        /// without reading earlier versions of the row (its time to a quarter of a
        /// microsecond and 62 random bits name no row yet).
        /// The insert it makes still refuses an id already in the table it writes (the
        /// typed table for a complete row, `partial_row` otherwise), and the transaction
        /// rolls back: nothing there is overwritten.
        @discardableResult
        public mutating func create(_ entity: EntityKind, _ rowID: String, _ fields: RowFields) throws -> Change {
            try put(entity, rowID, fields, stamp: nil, fresh: true)
        }

        /// Creates a row that several machines may generate independently (a recurring
        /// task of one period), stamped with a fixed, deterministic time earlier than any
        /// person's action on it: the copies merge into one row and never undo an edit.
        /// Only for rows that do not exist here yet.
        @discardableResult
        public mutating func putGenerated(_ entity: EntityKind, _ rowID: String, _ fields: RowFields,
                                          at hlc: HybridTimestamp) throws -> Change {
            // Later local writes must still be stamped after it.
            try? clock.observe(remote: hlc, physicalMilliseconds: store.physicalClock())
            return try put(entity, rowID, fields, stamp: Stamp(hlc: hlc, origin: store.replicaID), fresh: false)
        }

        private mutating func put(_ entity: EntityKind, _ rowID: String, _ fields: RowFields, stamp fixed: Stamp?,
                                  fresh: Bool) throws -> Change {
            let schema = entity.schema
            var stamp = fixed ?? Stamp(hlc: clock.next(physicalMilliseconds: store.physicalClock()), origin: store.replicaID)
            let before = fresh ? VersionedRow(schema) : try store.versions(entity, rowID)
            var row = before
            guard fields.count <= Limits.maxFieldsPerChange else {
                throw StoreError.invalidChange(.tooManyFields(fields.count), origin: store.replicaID, seq: seq + 1)
            }
            // The fields in the order of their names (the order a change lists them in): each
            // pair's field number placed by its name's rank, on the stack (sorting the pairs
            // made an array of them and compared the names).
            var entries = InlineArray<16, (number: Int, pair: Int)>(repeating: (0, 0))
            var count = 0, seen: UInt64 = 0
            for (pair, (name, _)) in fields.pairs.enumerated() {
                guard let number = schema.number(of: name) else {
                    // The first unknown name in name order, as the names are met below.
                    let unknown = fields.pairs.map(\.0).filter { schema.number(of: $0) == nil }.min()!
                    throw StoreError.invalidChange(.unknownField(entity, unknown), origin: store.replicaID, seq: seq + 1)
                }
                guard seen & (1 << UInt64(number)) == 0 else {
                    throw StoreError.invalidChange(.duplicateField(entity, name), origin: store.replicaID, seq: seq + 1)
                }
                seen |= 1 << UInt64(number)
                var place = count
                while place > 0, schema.nameRanks[entries[place - 1].number] > schema.nameRanks[number] {
                    entries[place] = entries[place - 1]
                    place -= 1
                }
                entries[place] = (number, pair)
                count += 1
            }
            var writes: [FieldWrite] = []
            writes.reserveCapacity(count)
            for position in 0..<count {
                let (number, pair) = entries[position]
                let (name, value) = fields.pairs[pair]
                let existing = row[number]?.stamp
                if fixed != nil, existing != nil {
                    throw StoreError.immutableField(entity, rowID: rowID, field: name)
                }
                if let existing, existing >= stamp {
                    // Cannot happen while every stamp this database holds went through
                    // the clock; if the file was edited by hand, stay ahead of it.
                    clock = HybridClock(last: existing.hlc, maxDriftMilliseconds: clock.maxDriftMilliseconds)
                    stamp = Stamp(hlc: clock.next(physicalMilliseconds: store.physicalClock()), origin: store.replicaID)
                }
                if existing != nil, schema.fields[number].immutable, row[number]?.value != value {
                    throw StoreError.immutableField(entity, rowID: rowID, field: name)
                }
                writes.append(FieldWrite(field: schema.fieldNames[number], value: value, base: existing))
            }
            let change = Change(origin: store.replicaID, seq: seq + 1, hlc: stamp.hlc, member: member,
                                entity: entity, rowID: rowID, fields: writes)
            // The rules of `schema.validate(change)`; its fields are known distinct fields of
            // the entity already (above), so each value is checked by its number.
            do throws(ChangeValidationError) {
                try schema.validateHeader(change, memberChecked: memberChecked)
                for position in 0..<count { try schema.validate(entries[position].number, writes[position].value) }
            } catch {
                throw StoreError.invalidChange(error, origin: change.origin, seq: change.seq)
            }
            memberChecked = true
            for position in 0..<count {
                row[entries[position].number] = FieldVersion(value: writes[position].value, stamp: change.stamp, seq: change.seq,
                                                             base: writes[position].base, writer: writer)
            }
            try store.saveRow(entity, change.row, before: before, after: row, fresh: fresh)
            seq += 1
            if keepsChanges { changes.append(change) }
            return change
        }
    }

    // MARK: - Applying remote changes

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
        // Through a buffer pointer, here and below: a change is read where it is (iterating,
        // or the array's subscript, copied each: a retain and a release of each string).
        try batch.changes.withUnsafeBufferPointer { changes in
            for position in changes.indices {
                do throws(ChangeValidationError) { try changes[position].entity.schema.validate(changes[position]) } catch {
                    throw StoreError.invalidChange(error, origin: changes[position].origin, seq: changes[position].seq)
                }
                if (try? checker.check(remote: changes[position].hlc, physicalMilliseconds: now)) == nil {
                    holdBack.append(changes[position])
                    heldBack.insert(position)
                }
            }
        }
        // Any refusal of SQLite's (a rule of the database) is a refused batch, in words.
        return try inWords { do { return try connection.transaction {
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
            for change in holdBack {
                if change.origin == replicaID && change.seq > vv[replicaID] {
                    throw StoreError.foreignOwnChange(seq: change.seq)
                }
                try hold(change)
            }
            outcome.held = holdBack
            let holding = holdBack.isEmpty ? try heldOrigins() : try heldOrigins().union(holdBack.map(\.origin))
            // The changes applied are the batch's own array, shared, unless some are not.
            var notApplied = heldBack
            try batch.changes.withUnsafeBufferPointer { changes in
                for offset in changes.indices where heldBack.isEmpty || !heldBack.contains(offset) {
                    if changes[offset].origin == replicaID && changes[offset].seq > vv[replicaID] {
                        throw StoreError.foreignOwnChange(seq: changes[offset].seq)
                    }
                    try clock.observe(remote: changes[offset].hlc, physicalMilliseconds: now)
                    let key = RowKey(entity: changes[offset].entity, id: changes[offset].row)
                    // One hash and one probe: the row's position, or the next one claimed
                    // (a lookup, then an insert, cost two of each).
                    let (index, first) = Self.claim(&position[key, default: -1], next: rows.count)
                    if first {
                        let entity = changes[offset].entity
                        let new = try !anyPartial && lastIDs.sortsAfterEveryRow(entity, key.id, connection)
                        rows.append(TouchedRow(key: key, new ? VersionedRow(entity.schema)
                                                             : try versions(entity, key.id, anyPartial: anyPartial)))
                    }
                    // Merged in place: the array holds the only copy.
                    if try merge(changes[offset], into: &rows[index].current, &outcome) {
                        rows[index].changed = true
                    } else {
                        outcome.ignored += 1
                        notApplied.insert(offset)
                    }
                }
            }
            let changes = batch.changes
            outcome.applied = notApplied.isEmpty ? changes : changes.indices.filter { !notApplied.contains($0) }.map { changes[$0] }
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
                try saveRow(rows[index].key.entity, rows[index].key.id, before: rows[index].original, after: rows[index].current,
                            fresh: rows[index].original.isEmpty)
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
            if !outcome.applied.isEmpty || advanced { try saveClock(clock.last) }
            outcome.versionVector = vv
            return outcome
        } } catch let error as SQLiteError where error.code & 0xFF != 5 && error.code & 0xFF != 13 && error.code & 0xFF != 10 {
            throw StoreError.sqlite(error)
        } }
    }

    /// `slot`'s position, or `next` stored in it when it holds none yet (-1).
    @inline(__always) private static func claim(_ slot: inout Int, next: Int) -> (index: Int, first: Bool) {
        if slot >= 0 { return (slot, false) }
        slot = next
        return (next, true)
    }

    /// Merges one change into a row by the pure rule (``RowMerge``) and logs the conflicts
    /// it reports; true when at least one field took the change's value.
    private func merge(_ change: Change, into row: inout VersionedRow, _ outcome: inout ApplyOutcome) throws -> Bool {
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

    // MARK: - Row versions

    /// A row during `apply`: as read, as merged so far.
    package struct TouchedRow {
        package let key: RowKey
        package let original: VersionedRow
        package var current: VersionedRow
        package var changed = false
        package init(key: RowKey, _ versions: VersionedRow) {
            self.key = key
            original = versions
            current = versions
        }
    }

    package struct RowKey: Hashable {
        package let entity: EntityKind
        /// The row's id: a UUID's hashes and compares as two words, no string.
        package let id: TextID

        /// The table (top byte), then the first seven bytes of the id's text, big-endian:
        /// ordered as the tables order their rows, for ids that differ in those bytes (a
        /// UUID's are the digits of its first 28 bits, made from its words).
        package var sortPrefix: UInt64 {
            let table = UInt64(entity.ordinal) << 56
            switch id {
            case let .uuid(high, _):
                // Its first eight digits, the first in the top byte, less the eighth.
                return table | Hex.hex8(UInt32(truncatingIfNeeded: high >> 32)).byteSwapped >> 8
            case var .text(text):
                return text.withUTF8 { bytes in
                    var prefix = table, shift: UInt64 = 48
                    for byte in bytes.prefix(7) {
                        prefix |= UInt64(byte) << shift
                        shift &-= 8
                    }
                    return prefix
                }
            }
        }
    }

    /// The largest row id of each typed table, read when first asked (for one transaction:
    /// rows written after the read are not counted).
    private struct LastRowIDs {
        private var read = [Bool](repeating: false, count: EntityKind.allCases.count)
        private var last = [TextID?](repeating: nil, count: EntityKind.allCases.count)

        /// Whether `rowID` sorts after every id in `entity`'s table, in SQLite's order for the
        /// ids (BINARY: their bytes), so that the table cannot hold it.
        mutating func sortsAfterEveryRow(_ entity: EntityKind, _ id: TextID, _ connection: Connection) throws -> Bool {
            if !read[entity.ordinal] {
                last[entity.ordinal] = try connection.query("SELECT max(id) FROM \(entity.rawValue)") { try $0.step() ? $0.optionalText(0).map(TextID.init) : nil }
                read[entity.ordinal] = true
            }
            guard let last = last[entity.ordinal] else { return true } // an empty table
            // Two UUIDs by their words (their texts order as their values); any other pair
            // by memcmp over the bytes (the generic comparison of two UTF-8 views cost 2 % of
            // the apply), the shorter first when one is a prefix of the other.
            if case let .uuid(lastHigh, lastLow) = last, case let .uuid(high, low) = id {
                return (lastHigh, lastLow) < (high, low)
            }
            return last.withUTF8 { last in
                id.withUTF8 { id in
                    let common = min(last.count, id.count)
                    let order = common == 0 ? 0 : memcmp(last.baseAddress!, id.baseAddress!, common)
                    return order < 0 || (order == 0 && last.count < id.count)
                }
            }
        }
    }

    /// Every field version of one row (empty for a row never written).
    package func versions(_ entity: EntityKind, _ rowID: String) throws -> VersionedRow {
        try versions(entity, TextID(rowID), anyPartial: true)
    }

    /// `anyPartial: false`: `partial_row` is known to be empty (checked in this transaction),
    /// so a row the typed table lacks has no versions and is not looked for there.
    private func versions(_ entity: EntityKind, _ id: TextID, anyPartial: Bool) throws -> VersionedRow {
        try Self.readVersions(entity, id, typed: rowStatement(entity, .select),
                              partial: anyPartial ? hot(.selectPartial) : nil) ?? VersionedRow(entity.schema)
    }

    /// The same read on another connection (a delta reader's), with the statements it keeps.
    final class RecordStatements {
        private let connection: Connection
        /// By ``EntityKind/ordinal``: prepared at first use and kept (the connection's cache,
        /// keyed by SQL text, hashed the text on every read: 6 % of a sending agent).
        private var selects = [Statement?](repeating: nil, count: EntityKind.allCases.count)
        private var partial: Statement?

        init(_ connection: Connection) { self.connection = connection }

        func versions(_ entity: EntityKind, _ id: TextID) throws -> VersionedRow? {
            let select: Statement
            if let prepared = selects[entity.ordinal] {
                select = prepared
            } else {
                select = try Statement(connection: connection, sql: ReplicaStore.rowSQL[entity]!.select)
                selects[entity.ordinal] = select
            }
            let partial: Statement
            if let prepared = self.partial {
                partial = prepared
            } else {
                partial = try Statement(connection: connection, sql: HotStatement.selectPartial.sql)
                self.partial = partial
            }
            return try ReplicaStore.readVersions(entity, id, typed: select, partial: partial)
        }
    }

    /// A row's record: from its typed table when complete, else from `partial_row`; nil
    /// when the row has none. The statements are `rowSQL[entity].select` and
    /// `HotStatement.selectPartial`, reset; they are left reset.
    fileprivate static func readVersions(_ entity: EntityKind, _ id: TextID,
                                         typed: Statement, partial: Statement?) throws -> VersionedRow? {
        defer { typed.reset(); partial?.reset() }
        try typed.bind(id: id, at: 1)
        if try typed.step() { return try decodeVersions(typed, column: 0, entity: entity, rowID: id.text, typedColumns: 1) }
        guard let partial else { return nil }
        try partial.bind(.text(entity.rawValue), at: 1)
        try partial.bind(id: id, at: 2)
        guard try partial.step() else { return nil }
        return try decodeVersions(partial, column: 0, entity: entity, rowID: id.text, typedColumns: nil)
    }

    /// Decodes the record in `column`; `typedColumns`: where the row's typed columns start
    /// (in schema order) in a typed row, which hold the values the record leaves out; nil
    /// for `partial_row`.
    static func decodeVersions(_ statement: Statement, column: Int32, entity: EntityKind, rowID: @autoclosure () -> String,
                               typedColumns: Int32?) throws -> VersionedRow {
        do {
            return try statement.withBlob(column) { bytes in
                try RowVersions.decode(bytes, schema: entity.schema,
                                       column: typedColumns.map { first in { statement.value(first + Int32($0)) } })
            }
        } catch let error as RowVersions.DecodingError {
            throw StoreError.corruptRow(entity, rowID: rowID(), reason: error.reason)
        }
    }

    /// Writes a row: a complete row (every field arrived) goes to its typed table, columns
    /// and versions record in one B-tree write, and the typed table's constraints have the
    /// last word; a row still missing fields goes to `partial_row` until the change that
    /// completes it. Keeps `change_index` pointing at the changes the row still holds a
    /// field of: a change whose every field was superseded leaves the index (the later
    /// change that superseded it carries the values now).
    /// `fresh`: the row must not exist yet (an insert, which fails if it does).
    package func saveRow(_ entity: EntityKind, _ id: TextID, before: VersionedRow, after: VersionedRow,
                         fresh: Bool = false) throws {
        let complete = Self.isComplete(after)
        do {
            if complete, fresh {
                // Held, and made with its neighbours by one multi-row insert (HeldInserts.swift).
                connection.held.hold(entity, id: id, row: after)
            } else if complete, let columns = Self.columns(after) {
                let rowID = id.text
                let record = RowVersions.encode(after, inTypedRow: true)
                let statement = try rowStatement(entity, .upsert)
                try statement.bind(.text(rowID), at: 1)
                for (index, value) in columns.enumerated() { try statement.bind(value, at: Int32(index + 2)) }
                try statement.bind(blob: record, at: Int32(columns.count + 2))
                while try statement.step() {}
                statement.reset()
                if !before.isEmpty && !Self.isComplete(before) {
                    try hot(.deletePartial).run([.text(entity.rawValue), .text(rowID)]) // completed now
                }
            } else {
                let record = RowVersions.encode(after, inTypedRow: false)
                let statement = try hot(fresh ? .insertPartial : .upsertPartial)
                try statement.bind(.text(entity.rawValue), at: 1)
                try statement.bind(id: id, at: 2)
                try statement.bind(blob: record, at: 3)
                while try statement.step() {}
                statement.reset()
            }
        } catch let error as SQLiteError where error.isConstraint {
            throw StoreError.constraint(entity, rowID: id.text, error)
        }
        // The changes the row refers to (a handful): those it no longer does lose their index
        // entry, those it newly does gain one, each once, in field order. Found by scanning
        // the two rows in place (lists of them cost two arrays a write).
        try before.withVersions { old in
            try after.withVersions { new in
                try before.forEach { number, version in
                    let ref = version.changeRef
                    guard !before.contains(ref, before: number, in: old), !after.contains(ref, in: new) else { return }
                    try hot(.deleteIndex).run([.integer(ref.origin.storage), .integer(Int64(ref.seq))])
                }
                after.forEach { number, version in
                    let ref = version.changeRef
                    guard !after.contains(ref, before: number, in: new), !before.contains(ref, in: old) else { return }
                    connection.held.hold(origin: ref.origin.storage, seq: Int64(ref.seq), entity: entity, id: id)
                }
            }
        }
        try connection.flushIfFull()
    }

    /// Whether a row has every field that is not `optional` (its typed table can hold it).
    package static func isComplete(_ row: VersionedRow) -> Bool {
        let schema = row.schema
        guard row.count >= schema.requiredFieldCount else { return false }
        return schema.fields.indices.allSatisfy { row.contains($0) || schema.fields[$0].optional }
    }

    /// The typed columns of a row in schema order, or nil while a field that is not
    /// `optional` is missing (an optional one missing is null).
    package static func columns(_ row: VersionedRow) -> [FieldValue]? {
        guard isComplete(row) else { return nil }
        return row.withVersions { versions in
            // The value alone copied; an optional field without a version is null.
            row.schema.fields.indices.map { row.contains($0) ? versions[$0]!.value : .null }
        }
    }

    /// The SQL of each typed table: read a row's versions, upsert a whole row (a new row is
    /// inserted by ``HeldInserts``).
    package static let rowSQL: [EntityKind: (select: String, upsert: String)] = Dictionary(
        uniqueKeysWithValues: EntityKind.allCases.map { entity in
            let names = entity.schema.fieldNames
            let table = entity.rawValue
            let placeholders = (1...names.count + 2).map { "?\($0)" }.joined(separator: ", ")
            let insert = "INSERT INTO \(table) (id, \(names.joined(separator: ", ")), versions) VALUES (\(placeholders))"
            let update = (names + ["versions"]).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            return (entity, (select: "SELECT versions, \(names.joined(separator: ", ")) FROM \(table) WHERE id = ?1",
                             upsert: insert + " ON CONFLICT (id) DO UPDATE SET " + update))
        })

    /// The statements every change runs, prepared once and held here: taking them from the
    /// connection's cache would hash their SQL text on every call (perf: 4 % of a write).
    package enum HotStatement: Int, CaseIterable {
        case selectPartial, upsertPartial, insertPartial, deletePartial, deleteIndex
        case selectCounter, selectClock, saveClock, saveCounterAndClock, selectReplicaID, savePublished

        package var sql: String {
            switch self {
            case .selectPartial: "SELECT versions FROM partial_row WHERE entity = ?1 AND row_id = ?2"
            case .upsertPartial: """
                INSERT INTO partial_row (entity, row_id, versions) VALUES (?1, ?2, ?3)
                ON CONFLICT (entity, row_id) DO UPDATE SET versions = excluded.versions
                """
            case .insertPartial: "INSERT INTO partial_row (entity, row_id, versions) VALUES (?1, ?2, ?3)"
            case .deletePartial: "DELETE FROM partial_row WHERE entity = ?1 AND row_id = ?2"
            case .deleteIndex: "DELETE FROM change_index WHERE origin = ?1 AND seq = ?2"
            case .selectCounter: "SELECT seq FROM version_vector WHERE origin = ?1"
            case .selectClock: """
                SELECT max(coalesce((SELECT hlc FROM version_vector WHERE origin = ?1), 0),
                           coalesce((SELECT value FROM meta WHERE key = 'hlc'), 0))
                """
            case .saveClock: "UPDATE version_vector SET hlc = ?2 WHERE origin = ?1"
            case .selectReplicaID: "SELECT value FROM meta WHERE key = 'replica_id'"
            case .savePublished: """
                INSERT INTO meta (key, value) VALUES ('published_seq', ?1)
                ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)
                """
            case .saveCounterAndClock: """
                INSERT INTO version_vector (origin, seq, hlc) VALUES (?1, ?2, ?3)
                ON CONFLICT (origin) DO UPDATE SET seq = excluded.seq, hlc = excluded.hlc
                """
            }
        }
    }
    private var hotStatements = [Statement?](repeating: nil, count: HotStatement.allCases.count)
    private enum RowStatement: Int { case select, upsert }
    /// By `entity.ordinal * 2 + RowStatement.rawValue`: an index, not a hash.
    private var rowStatements = [Statement?](repeating: nil, count: EntityKind.allCases.count * 2)

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
    private func rowStatement(_ entity: EntityKind, _ which: RowStatement) throws -> Statement {
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

    func saveVersion(_ origin: ReplicaID, _ seq: UInt64) throws {
        try connection.statement("INSERT INTO version_vector (origin, seq) VALUES (?1, ?2) ON CONFLICT(origin) DO UPDATE SET seq = excluded.seq")
            .run([.integer(origin.storage), .integer(Int64(seq))])
    }

    /// The clock goes into this replica's row of `version_vector` (the page a commit that
    /// advances the vector writes anyway), or into `meta` while there is no such row.
    private func saveClock(_ last: HybridTimestamp) throws {
        let statement = try hot(.saveClock)
        try statement.bind(replicaID.storage, at: 1)
        try statement.bind(last.rawValue, at: 2)
        while try statement.step() {}
        statement.reset()
        if connection.changes == 0 { try setMeta("hlc", .integer(last.rawValue)) }
    }

    private func logConflict(_ kind: ConflictRecord.Kind, _ entity: EntityKind, _ rowID: String, _ field: String,
                             kept: ConflictRecord.Side, lost: ConflictRecord.Side) throws {
        try connection.statement("""
            INSERT INTO conflict (logged_hlc, kind, entity, row_id, field,
              kept_value, kept_hlc, kept_origin, kept_member, lost_value, lost_hlc, lost_origin, lost_member)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
            """).run([
                .integer(max(kept.stamp.hlc.rawValue, lost.stamp.hlc.rawValue)), .text(kind.rawValue),
                .text(entity.rawValue), .text(rowID), .text(field),
                kept.value, .integer(kept.stamp.hlc.rawValue), .integer(kept.stamp.origin.storage), kept.member.map { .text($0) } ?? .null,
                lost.value, .integer(lost.stamp.hlc.rawValue), .integer(lost.stamp.origin.storage), lost.member.map { .text($0) } ?? .null,
            ])
    }

    /// The conflict log, newest first.
    public func conflicts(limit: Int = 100) throws -> [ConflictRecord] {
        return try connection.query("""
            SELECT id, kind, entity, row_id, field, kept_value, kept_hlc, kept_origin, kept_member,
                   lost_value, lost_hlc, lost_origin, lost_member
            FROM conflict ORDER BY id DESC LIMIT ?1
            """, [.integer(Int64(limit))]) { statement in
        var records: [ConflictRecord] = []
        while try statement.step() {
            func side(_ at: Int32) -> ConflictRecord.Side {
                ConflictRecord.Side(value: statement.value(at),
                                    stamp: Stamp(hlc: HybridTimestamp(rawValue: statement.int(at + 1)), origin: ReplicaID(storage: statement.int(at + 2))),
                                    member: statement.optionalText(at + 3))
            }
            guard let kind = ConflictRecord.Kind(rawValue: statement.text(1)),
                  let entity = EntityKind(rawValue: statement.text(2)) else { continue }
            records.append(ConflictRecord(id: statement.int(0), kind: kind, entity: entity, rowID: statement.text(3),
                                          field: statement.text(4), kept: side(5), lost: side(9)))
        }
        return records
        }
    }

    // MARK: - Deltas and export

    /// A cursor over everything this replica holds that a peer with `peerVector` lacks,
    /// cut into batches of at most `batchLimit` changes and about `byteLimit` bytes. It reads one consistent
    /// snapshot on its own connection, so local writes may go on meanwhile.
    public func deltas(for peerVector: VersionVector, batchLimit: Int = DeltaCursor.defaultBatchLimit,
                       byteLimit: Int = DeltaCursor.defaultByteLimit) throws -> DeltaCursor {
        try DeltaCursor(path: path, peerVector: peerVector, batchLimit: batchLimit, byteLimit: byteLimit)
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
                    state[entity, default: [:]][rowID] = try Self.decodeVersions(statement, column: 1, entity: entity, rowID: rowID,
                                                                                 typedColumns: 2).values
                }
            }
        }
        try connection.query("SELECT entity, row_id, versions FROM partial_row") { statement in
            while try statement.step() {
                guard let entity = EntityKind(rawValue: statement.text(0)) else { continue }
                let rowID = statement.text(1)
                state[entity, default: [:]][rowID] = try Self.decodeVersions(statement, column: 2, entity: entity, rowID: rowID,
                                                                             typedColumns: nil).values
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
