import PulseModel
/// A read-only connection to a household database that hands out ``DeltaCursor``s,
/// one at a time: a session's sender keeps one for its whole life instead of opening
/// the database for every push.
///
/// Threading rule: owned by one task; a cursor must be finished or released before the
/// next one is asked for.
public final class DeltaReader {
    let connection: Connection
    let records: ReplicaStore.RecordStatements

    public init(path: String) throws {
        connection = try Connection(path: path, mode: .readOnly)
        records = ReplicaStore.RecordStatements(connection)
    }

    /// A cursor over what a peer with `peerVector` lacks, from a snapshot taken now.
    public func deltas(
        for peerVector: VersionVector, batchLimit: Int = DeltaCursor.defaultBatchLimit,
        byteLimit: Int = DeltaCursor.defaultByteLimit
    ) throws -> DeltaCursor {
        precondition(!connection.isInTransaction, "the previous cursor of this reader is still open")
        return try DeltaCursor(
            connection: connection, records: records, peerVector: peerVector, batchLimit: batchLimit,
            byteLimit: byteLimit)
    }
}

/// Rows read on the reader's own connection, between cursors (each statement its own
/// snapshot of the committed database).
extension DeltaReader: StoreReading {
    public func row(_ entity: EntityKind, _ rowID: String) throws -> [String: FieldValue] {
        precondition(!connection.isInTransaction, "a cursor of this reader is still open")
        return try records.versions(entity, TextID(rowID))?.values ?? [:]
    }

    public func rows(_ entity: EntityKind, _ query: RowQuery) throws -> [StoredRow] {
        precondition(!connection.isInTransaction, "a cursor of this reader is still open")
        return try ReplicaStore.rows(connection, entity, query)
    }

    public func meta(_ key: String) throws -> FieldValue? {
        precondition(!connection.isInTransaction, "a cursor of this reader is still open")
        return try ReplicaStore.meta(connection, key)
    }
}

/// Rows read inside the cursor's snapshot, before its first batch: what a sender checks of the
/// household (the peer's standing) is read from the very snapshot it is about to send, in the
/// same read transaction (no transaction of its own per read, and no change between the check
/// and the batches).
extension DeltaCursor: StoreReading {
    public func row(_ entity: EntityKind, _ rowID: String) throws -> [String: FieldValue] {
        precondition(connection.isInTransaction, "the cursor's snapshot has ended")
        return try records.versions(entity, TextID(rowID))?.values ?? [:]
    }

    public func rows(_ entity: EntityKind, _ query: RowQuery) throws -> [StoredRow] {
        precondition(connection.isInTransaction, "the cursor's snapshot has ended")
        return try ReplicaStore.rows(connection, entity, query)
    }

    public func meta(_ key: String) throws -> FieldValue? {
        precondition(connection.isInTransaction, "the cursor's snapshot has ended")
        return try ReplicaStore.meta(connection, key)
    }
}

/// Streams what one replica holds that a peer lacks, in bounded batches, from one
/// consistent snapshot of the database (a read transaction on a connection of its own).
///
/// For each replica `o` with `snapshot[o] > peer[o]`, it reads the field versions
/// numbered above `peer[o]`, in change order, grouping the fields of one change
/// together. Numbers that no longer appear were superseded by later writes, which the
/// same snapshot holds, so the last batch of `o` may claim coverage up to `snapshot[o]`.
/// Memory stays bounded by the batch size, whatever the database size.
///
/// A batch ends at `batchLimit` changes or before its changes would take more than
/// `byteLimit` bytes in the BATCH encoding (``wireSizeBound(_:)``, an upper bound), so that
/// one BATCH always fits a frame (4 MiB) whatever its changes hold.
public final class DeltaCursor {
    /// Changes per batch: large, so that a catch-up applies few transactions (one commit
    /// and fsync each); within the protocol's 10 000.
    public static let defaultBatchLimit = 3000
    /// Bytes of changes per batch: 3 MiB leaves room in a 4 MiB frame for the coverage
    /// claims (at most 4096 of ≤ 30 bytes) and the header.
    public static let defaultByteLimit = 3 << 20
    private let connection: Connection
    private let records: ReplicaStore.RecordStatements
    private let batchLimit: Int
    private let byteLimit: Int
    private var pending: [(origin: ReplicaID, after: UInt64, upTo: UInt64)]
    /// Changes held here beyond the vector's entry for their origin: while a change of that
    /// origin is held (stamped too far ahead), the entry waits, but the changes merged meanwhile
    /// are current and travel on (no coverage is claimed for them: HeldChanges.swift).
    private var beyond: [(origin: ReplicaID, after: UInt64, upTo: UInt64)]
    private var finished = false
    /// The snapshot's version vector: what the peer holds once it applied every batch.
    public let snapshotVector: VersionVector
    /// The snapshot's `published_seq` and replica id (Rewind.swift): a local write that raised
    /// the mark in its own commit needs no mark before its changes are sent.
    public let publishedSeq: UInt64
    public let ownReplica: ReplicaID?
    /// Whether the snapshot keeps changes of a later release (KeptChanges.swift): then each
    /// range of numbers is read from `kept_change` too.
    private let anyKept: Bool
    /// Whether the snapshot holds stamps of overwritten numbers (Histories.swift): then each
    /// range sends them as stubs beside its changes.
    private let anyStubs: Bool

    package convenience init(path: String, peerVector: VersionVector, batchLimit: Int, byteLimit: Int) throws {
        let connection = try Connection(path: path, mode: .readOnly)
        try self.init(
            connection: connection, records: ReplicaStore.RecordStatements(connection), peerVector: peerVector,
            batchLimit: batchLimit, byteLimit: byteLimit)
    }

    init(
        connection: Connection, records: ReplicaStore.RecordStatements, peerVector: VersionVector, batchLimit: Int,
        byteLimit: Int
    ) throws {
        precondition(batchLimit > 0 && byteLimit > 0)
        self.connection = connection
        self.records = records
        self.batchLimit = batchLimit
        self.byteLimit = byteLimit
        try connection.execute("BEGIN DEFERRED")
        // The first read fixes the snapshot.
        snapshotVector = try ReplicaStore.readVersionVector(connection)
        (publishedSeq, ownReplica) = try connection.query(
            "SELECT key, value FROM meta WHERE key IN ('published_seq', 'replica_id')"
        ) { statement in
            var published: UInt64 = 0, replica: ReplicaID?
            while try statement.step() {
                if statement.text(0) == "replica_id" { replica = ReplicaID(storage: statement.int(1)) } else { published = UInt64(max(0, statement.int(1))) }
            }
            return (published, replica)
        }
        pending = snapshotVector.entries
            .filter { $0.value > peerVector[$0.key] }
            .sorted { $0.key < $1.key }
            .map { (origin: $0.key, after: peerVector[$0.key], upTo: $0.value) }
        anyKept = try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM kept_change)") == 1
        anyStubs = try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM change_stub)") == 1
        let vector = snapshotVector
        beyond = try connection.query("SELECT origin, up_to FROM held_coverage ORDER BY origin") { statement in
            var ranges: [(origin: ReplicaID, after: UInt64, upTo: UInt64)] = []
            while try statement.step() {
                let origin = ReplicaID(storage: statement.int(0))
                let after = max(vector[origin], peerVector[origin])
                let upTo = UInt64(max(0, statement.int(1)))
                if upTo > after { ranges.append((origin, after, upTo)) }
            }
            return ranges
        }
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
        var bytes = 0
        while let range = pending.first, Self.count(batch) < batchLimit {
            let (changes, kept, stubs, last, exhausted) = try read(
                origin: range.origin, after: range.after, upTo: range.upTo,
                limit: batchLimit - Self.count(batch), bytes: &bytes, firstInBatch: Self.count(batch) == 0)
            batch.changes += changes
            batch.kept += kept
            batch.stubs += stubs
            if !exhausted {
                // The batch is full before this replica's changes end.
                if let last {
                    batch.coverage.append(Coverage(origin: range.origin, after: range.after, upTo: last, afterCheck: try afterCheck(range)))
                    pending[0].after = last
                }
                break
            }
            batch.coverage.append(Coverage(origin: range.origin, after: range.after, upTo: range.upTo, afterCheck: try afterCheck(range)))
            pending.removeFirst()
        }
        while pending.isEmpty, let range = beyond.first, Self.count(batch) < batchLimit {
            let (changes, kept, _, last, exhausted) = try read(
                origin: range.origin, after: range.after, upTo: range.upTo,
                limit: batchLimit - Self.count(batch), bytes: &bytes, firstInBatch: Self.count(batch) == 0)
            batch.changes += changes
            batch.kept += kept
            if !exhausted {
                if let last { beyond[0].after = last }
                break
            }
            beyond.removeFirst()
        }
        if pending.isEmpty && beyond.isEmpty {
            finished = true
            if connection.isInTransaction { try connection.execute("COMMIT") }
        }
        return batch.isEmpty ? nil : batch
    }

    /// The check of this snapshot's stamp at a range's start (Histories.swift): the receiver
    /// compares it with its own, so a second history under one replica id is never joined to
    /// the first (0: the range starts at 0, or the stamp is unknown).
    private func afterCheck(_ range: (origin: ReplicaID, after: UInt64, upTo: UInt64)) throws -> UInt32 {
        range.after == 0 ? 0 : HistoryHead.check(try ReplicaStore.stamp(connection, records, of: range.origin, range.after))
    }

    /// The changes and stubs of a batch, which its limit counts.
    private static func count(_ batch: DeltaBatch) -> Int { batch.changeCount + batch.stubs.count }

    /// The bytes a stub takes in a BATCH, at most.
    static let stubWireSize = 8 + 10 + 8

    /// An upper bound of the bytes `change` takes in a BATCH (docs/PROTOCOL.md: fixed
    /// 8-byte ids, varints of at most 10 bytes, strings as a varint length and UTF-8).
    public static func wireSizeBound(_ change: Change) -> Int {
        var size = 8 + 10 + 10 + 1 + 5 + change.row.utf8Count + 1 + 5 + (change.writer?.utf8Count ?? 0) + 5
        for field in change.fields {
            size += 5 + field.field.utf8.count + 1 + 1 + 10 + 8
            switch field.value {
            case .null: break
            case .integer: size += 10
            case let .text(text): size += 5 + text.utf8.count
            }
        }
        return size
    }

    /// Up to `limit` changes of `origin` numbered in `(after, upTo]`, each complete, and
    /// whether they are all there are. A change is the fields of its row that still
    /// carry its number.
    /// `bytes`: the batch's size so far (``wireSizeBound(_:)``), which stays within the byte
    /// limit (the first change of a batch always goes: one change is far below a frame).
    private func read(
        origin: ReplicaID, after: UInt64, upTo: UInt64, limit: Int,
        bytes: inout Int, firstInBatch: Bool
    ) throws -> (changes: [Change], kept: [KeptChange], stubs: [ChangeStub], last: UInt64?, exhausted: Bool) {
        guard anyKept || anyStubs else {
            let (changes, exhausted) = try readIndexed(
                origin: origin, after: after, upTo: upTo, limit: limit, bytes: &bytes, firstInBatch: firstInBatch)
            return (changes, [], [], changes.last?.seq, exhausted)
        }
        // Both streams in number order, each read as far as the limit lets a batch take: the
        // indexed changes (their fields of this release) and the kept ones (of a later
        // release); one number in both is one change, sent whole.
        var indexedBytes = 0
        let (indexed, indexedAll) = try readIndexed(
            origin: origin, after: after, upTo: upTo, limit: limit, bytes: &indexedBytes, firstInBatch: true, byteLimit: Int.max)
        let kept = anyKept ? try ReplicaStore.keptChanges(connection, origin: origin, after: after, upTo: upTo, limit: limit + 1) : []
        let keptAll = kept.count <= limit
        let stubs: [ChangeStub] =
            anyStubs
            ? try connection.query(
                "SELECT seq, hlc FROM change_stub WHERE origin = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4",
                [.integer(origin.storage), .integer(Int64(after)), .integer(Int64(upTo)), .integer(Int64(limit) + 1)]
            ) { statement in
                var stubs: [ChangeStub] = []
                while try statement.step() { stubs.append(ChangeStub(origin: origin, seq: UInt64(statement.int(0)), hlc: UInt64(statement.int(1)))) }
                return stubs
            } : []
        let stubsAll = stubs.count <= limit
        var changes: [Change] = [], keptOut: [KeptChange] = [], stubsOut: [ChangeStub] = []
        var s = 0
        var last: UInt64?
        var i = 0, k = 0
        func fits(_ size: Int) -> Bool {
            if bytes + size > byteLimit && !(firstInBatch && last == nil) { return false }
            bytes += size
            return true
        }
        while (i < indexed.count || k < kept.count || s < stubs.count) && changes.count + keptOut.count + stubsOut.count < limit {
            let seq = min(
                i < indexed.count ? indexed[i].seq : .max, k < kept.count ? kept[k].seq : .max, s < stubs.count ? stubs[s].seq : .max)
            if s < stubs.count && stubs[s].seq == seq {
                s += 1
                if !(i < indexed.count && indexed[i].seq == seq) && !(k < kept.count && kept[k].seq == seq) {
                    // Only the stamp of an overwritten number (a change held too wins over it).
                    guard fits(Self.stubWireSize) else { return (changes, keptOut, stubsOut, last, false) }
                    stubsOut.append(stubs[s - 1])
                    last = seq
                    continue
                }
            }
            if i < indexed.count && indexed[i].seq == seq {
                var change = indexed[i]
                i += 1
                if k < kept.count && kept[k].seq == seq {
                    // The same change's fields of a later release, beside those of this one.
                    let names = Set(change.fields.map(\.field))
                    let fields = (change.fields + kept[k].fields.filter { !names.contains($0.field) }).sorted { $0.field < $1.field }
                    change = Change(
                        origin: change.origin, seq: change.seq, hlc: change.hlc, writer: change.writer, entity: change.entity,
                        row: change.row, fields: fields)
                    k += 1
                }
                guard fits(Self.wireSizeBound(change)) else { return (changes, keptOut, stubsOut, last, false) }
                changes.append(change)
            } else {
                let change = kept[k]
                k += 1
                if let entity = EntityKind(code: change.code) {
                    // Fields of a later release alone (those of this one were overwritten since).
                    let known = Change(
                        origin: change.origin, seq: change.seq, hlc: change.hlc, writer: change.writer, entity: entity,
                        row: change.row, fields: change.fields)
                    guard fits(Self.wireSizeBound(known)) else { return (changes, keptOut, stubsOut, last, false) }
                    changes.append(known)
                } else {
                    guard fits(Self.wireSizeBound(change)) else { return (changes, keptOut, stubsOut, last, false) }
                    keptOut.append(change)
                }
            }
            last = seq
        }
        let exhausted = i == indexed.count && k == kept.count && s == stubs.count && indexedAll && keptAll && stubsAll
        return (changes, keptOut, stubsOut, last, exhausted)
    }

    /// An upper bound of the bytes a kept change takes in a BATCH (as ``wireSizeBound(_:)``).
    public static func wireSizeBound(_ change: KeptChange) -> Int {
        wireSizeBound(
            Change(origin: change.origin, seq: change.seq, hlc: change.hlc, writer: change.writer, entity: .household, row: change.row, fields: change.fields))
    }

    /// ``read(origin:after:upTo:limit:bytes:firstInBatch:)`` of the changes in `change_index`.
    private func readIndexed(
        origin: ReplicaID, after: UInt64, upTo: UInt64, limit: Int,
        bytes: inout Int, firstInBatch: Bool, byteLimit: Int? = nil
    ) throws -> ([Change], Bool) {
        let byteLimit = byteLimit ?? self.byteLimit
        return try connection.query(
            """
            SELECT seq, entity, row_id FROM change_index
            WHERE origin = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4
            """, [.integer(origin.storage), .integer(Int64(after)), .integer(Int64(upTo)), .integer(Int64(limit) + 1)]
        ) { statement in
            var changes: [Change] = []
            while try statement.step() {
                if changes.count == limit { return (changes, false) }
                let seq = UInt64(statement.int(0))
                guard let entity = ChangeIndex.entity(code: statement.int(1)) else {
                    throw StoreError.corruptIndex("change \(origin)#\(seq) names an unknown entity (code \(statement.int(1)))")
                }
                guard let id = ChangeIndex.id(statement, column: 2) else {
                    throw StoreError.corruptIndex("change \(origin)#\(seq) names its \(entity.rawValue) row by neither text nor 16 bytes")
                }
                guard let row = try records.versions(entity, id) else {
                    throw StoreError.corruptIndex("change \(origin)#\(seq) is indexed on \(entity.rawValue) \(id.text), which does not exist")
                }
                var fields: [FieldWrite] = []
                fields.reserveCapacity(row.count) // one allocation (appends grew it 1, 2, 4)
                let schema = entity.schema
                // The versions read in place: only the parts a change carries are copied. The
                // change's stamp and writer are read once, from the last of its fields.
                let stamp: (hlc: HybridTimestamp, writer: TextID?)? = row.withVersions { versions in
                    var last = -1
                    for number in schema.numbersByName where row.contains(number) {
                        guard versions[number].unsafelyUnwrapped.stamp.origin == origin,
                            versions[number].unsafelyUnwrapped.seq == seq
                        else { continue }
                        fields.append(
                            FieldWrite(
                                field: schema.fieldNames[number], value: versions[number].unsafelyUnwrapped.value,
                                base: versions[number].unsafelyUnwrapped.base))
                        last = number
                    }
                    return last < 0 ? nil : (versions[last].unsafelyUnwrapped.stamp.hlc, versions[last].unsafelyUnwrapped.writer)
                }
                // Every indexed change still holds a field of its row (saveRow keeps it so);
                // skipping one would claim coverage of a change never sent.
                guard let stamp else {
                    throw StoreError.corruptIndex("change \(origin)#\(seq) is indexed on \(entity.rawValue) \(id.text), which holds no field of it")
                }
                let change = Change(origin: origin, seq: seq, hlc: stamp.hlc, writer: stamp.writer, entity: entity, row: id, fields: fields)
                let size = Self.wireSizeBound(change)
                if bytes + size > byteLimit && !(firstInBatch && changes.isEmpty) { return (changes, false) }
                bytes += size
                changes.append(change)
            }
            return (changes, true)
        }
    }
}
