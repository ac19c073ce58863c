import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

// Local writes: one durable transaction of stamped, numbered changes (``ReplicaStore/write(member:waitForWriters:keepingChanges:_:)``).

extension ReplicaStore {

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
    public func write<T>(
        member: String?, waitForWriters: Bool = true, keepingChanges: Bool = true,
        _ body: (inout LocalWriter) throws -> T
    ) throws -> (T, [Change]) {
        if !waitForWriters { connection.setBusyTimeout(0) }
        defer { if !waitForWriters { connection.setBusyTimeout(Connection.busyTimeoutMilliseconds) } }
        let (result, changes, wrote) = try inWords {
            try connection.transaction {
                // Another process may have started a new replica since this one opened (Rewind.swift).
                let current = try hot(.selectReplicaID)
                if try current.step() { replicaID = ReplicaID(storage: current.int(0)) }
                current.reset()
                var writer = LocalWriter(
                    store: self, member: member,
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
                return (result, writer.changes, writer.seq != first)
            }
        }
        if wrote { localCommits &+= 1 }
        return (result, changes)
    }

    /// Runs `body`, whose local writes (``write(member:waitForWriters:keepingChanges:_:)``,
    /// each a savepoint here) are then one transaction: all durable at its commit, or none of
    /// them when it throws (a PUT of a to-do that is several household writes: issue 59).
    public func atomically<T>(_ body: () throws -> T) throws -> T {
        try inWords { try connection.transaction { try body() } }
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
        public mutating func putGenerated(
            _ entity: EntityKind, _ rowID: String, _ fields: RowFields,
            at hlc: HybridTimestamp
        ) throws -> Change {
            // Later local writes must still be stamped after it.
            try? clock.observe(remote: hlc, physicalMilliseconds: store.physicalClock())
            return try put(entity, rowID, fields, stamp: Stamp(hlc: hlc, origin: store.replicaID), fresh: false)
        }

        private mutating func put(
            _ entity: EntityKind, _ rowID: String, _ fields: RowFields, stamp fixed: Stamp?,
            fresh: Bool
        ) throws -> Change {
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
                if schema.fields[number].keptOnceSet, value == .null, let held = row[number]?.value, held != .null {
                    throw StoreError.immutableField(entity, rowID: rowID, field: name) // a removal is for good
                }
                writes.append(FieldWrite(field: schema.fieldNames[number], value: value, base: existing))
            }
            let change = Change(
                origin: store.replicaID, seq: seq + 1, hlc: stamp.hlc, member: member,
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
                row[entries[position].number] = FieldVersion(
                    value: writes[position].value, stamp: change.stamp, seq: change.seq,
                    base: writes[position].base, writer: writer)
            }
            try store.saveRow(entity, change.row, before: before, after: row, fresh: fresh)
            seq += 1
            if keepsChanges { changes.append(change) }
            return change
        }
    }

}
