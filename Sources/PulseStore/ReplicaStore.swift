import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

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
    /// How many transactions of local changes this store committed since it opened (its own
    /// writes and a continuation as a new replica): whoever made them, the agent compares it
    /// before and after its work to know that there is something to send
    /// (one invariant, where guessing from a method's name missed writes).
    public internal(set) var localCommits: UInt64 = 0
    /// Whether a change that loses its last field leaves its stamp in `change_stub`
    /// (Histories.swift): off while changes are renumbered.
    var recordsStubs = true

    public static let fileName = "household.sqlite"
    /// The page cache of the writing connection, in KiB.
    public static let cacheKibibytes = 16_384

    /// The wall clock in Unix milliseconds.
    public static let systemClock: @Sendable () -> Int64 = WallClock.system

    /// Opens (creating if needed) the database at `path`, migrating it to the latest schema.
    /// `newReplicaID` is the id a new database takes (tests pass one to be reproducible);
    /// an existing database keeps its own.
    public init(
        path: String,
        physicalClock: @escaping @Sendable () -> Int64 = ReplicaStore.systemClock,
        maxDriftMilliseconds: Int64 = HybridClock.defaultMaxDriftMilliseconds,
        newReplicaID: ReplicaID? = nil
    ) throws {
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
                let stored = try connection.scalarInt("SELECT value FROM meta WHERE key = 'replica_id'")
            {
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
                // The holder now, else the last one seen while waiting (it may have let go just now).
                throw StoreError.busy(path: path, holder: LockHolder.describe(database: path) ?? connection.busyWait.holderSeen)
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
        try inWords {
            try connection.statement("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
                .run([.text(key), value])
        }
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
}
