import CSQLite
import Synchronization
import PulseModel

/// An error reported by SQLite, with the statement that caused it.
public struct SQLiteError: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public let sql: String?

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql.prefix(120)))" }
        return text
    }

    /// A constraint of the schema refused the write.
    public var isConstraint: Bool { code & 0xFF == SQLITE_CONSTRAINT }
}

/// Process-wide settings of the SQLite library, made once, before its first connection:
/// memory statistics off (with them, Debian's build takes a global mutex in every
/// allocation — 15 % of a catch-up's CPU in a profile). Nothing here reads them.
public enum SQLiteLibrary {
    /// Call before any SQLite use of the process (``Connection`` does); later calls do nothing.
    public static func configure() { _ = configured }
    private static let configured: Int32 = csqlite_disable_memory_statistics()
}

/// One SQLite connection. Owns the `sqlite3*` handle and the prepared statements
/// made from it; both are finalized/closed in `deinit`.
///
/// Threading rule: a `Connection` is used by one thread at a time. It is not
/// `Sendable`; whoever owns it (the store, and above it one actor) serializes access.
final class Connection {
    let handle: OpaquePointer
    let path: String
    /// Every statement prepared on this connection (StatementCache.swift).
    let statements = StatementCache()
    /// Inserts held back to be made together (``HeldInserts``): flushed before any other
    /// statement runs on this connection.
    let held = HeldInserts()

    /// What a typed query's SQL depends on: the table, the filtered fields, the order.
    struct RowQueryShape: Hashable {
        let entity: EntityKind
        let filter: [String]
        /// Which of `filter`'s fields are asked to be null (`IS NULL`: `= NULL` holds for no row).
        var nulls: [Bool] = []
        let order: [String]
        let last: Bool
    }

    /// The statement for `shape`, made from `sql()` once for the connection's life.
    func rowQueryStatement(_ shape: RowQueryShape, sql: () -> String) throws -> Statement {
        try statements.shape(shape, on: self, sql: sql)
    }

    enum Mode { case readWrite, readOnly }

    /// How long a writer waits for another process's write transaction.
    static let busyTimeoutMilliseconds: Int32 = 5_000

    func setBusyTimeout(_ milliseconds: Int32) { busyWait.timeout = milliseconds }

    /// The wait for another process's write lock, and who held it (``BusyWait``).
    let busyWait: BusyWait

    /// The OS error behind the last failed call (ENOSPC behind an I/O error, say).
    var systemErrno: Int32 { sqlite3_system_errno(handle) }

    init(path: String, mode: Mode = .readWrite) throws {
        SQLiteLibrary.configure()
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        flags |= mode == .readWrite ? (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) : SQLITE_OPEN_READONLY
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: "\(message): \(path)", sql: nil)
        }
        self.handle = db
        self.path = path
        busyWait = BusyWait(timeout: Self.busyTimeoutMilliseconds) { LockHolder.describe(database: path) }
        Self.openPaths.withLock { $0[path, default: 0] += 1 }
        sqlite3_extended_result_codes(db, 1)
        // Wait for a writer of another process (the CLI while the agent writes) instead of failing,
        // noting who holds the lock meanwhile. The wait is owned by this connection, which
        // outlives the handle's use (closed in deinit, before the wait is released).
        sqlite3_busy_handler(
            db,
            { context, count in
                guard let context else { return 0 }
                let wait = Unmanaged<BusyWait>.fromOpaque(context).takeUnretainedValue()
                return wait.retry(count: count, pause: { _ = sqlite3_sleep(Int32($0 / .milliseconds(1))) }) ? 1 : 0
            }, Unmanaged.passUnretained(busyWait).toOpaque())
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
        Self.openPaths.withLock { paths in
            paths[path, default: 1] -= 1
            if paths[path] == 0 { paths[path] = nil }
        }
    }

    /// Paths this process has connections to, and how many (see ``DatabaseFile``: no
    /// other descriptor of such a file may be opened and closed here).
    private static let openPaths = Mutex<[String: Int]>([:])

    static func isOpen(_ path: String) -> Bool { openPaths.withLock { $0[path] != nil } }

    func execute(_ sql: String) throws {
        if held.count != 0 { try flushHeld() }
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: rc, message: message, sql: sql)
        }
    }

    /// A prepared statement, cached by its text for the life of the connection.
    func statement(_ sql: String) throws -> Statement { try statements.text(sql, on: self) }

    func error(_ rc: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// How many ``transaction(immediate:_:)`` calls are running: 0 outside one.
    private var transactionDepth = 0

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// Inside another (``ReplicaStore/atomically(_:)``), a savepoint of the enclosing one:
    /// released when it returns, its changes alone rolled back when it throws, and nothing
    /// durable until the outermost commits.
    func transaction<T>(immediate: Bool = true, _ body: () throws -> T) throws -> T {
        if transactionDepth > 0 { return try savepoint(body) }
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        transactionDepth = 1
        defer { transactionDepth = 0 }
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            held.discard()
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    private func savepoint<T>(_ body: () throws -> T) throws -> T {
        let name = "nested\(transactionDepth)"
        // `execute` makes the held inserts first (``HeldInserts``): what a rollback below
        // discards was held inside the savepoint only.
        try execute("SAVEPOINT \(name)")
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        do {
            let result = try body()
            try execute("RELEASE \(name)")
            return result
        } catch {
            held.discard()
            try? execute("ROLLBACK TO \(name)")
            try? execute("RELEASE \(name)")
            throw error
        }
    }

    /// Binds `values` to a cached statement, lets `body` step through it, and resets it
    /// afterwards: a statement left mid-way would hold a read transaction open (a stale
    /// snapshot, and a WAL that cannot be checkpointed).
    func query<T>(_ sql: String, _ values: [FieldValue] = [], _ body: (Statement) throws -> T) throws -> T {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        return try body(statement)
    }

    func scalarInt(_ sql: String, _ values: [FieldValue] = []) throws -> Int64? {
        try query(sql, values) { try $0.step() ? $0.int(0) : nil }
    }
}

/// A prepared statement. Bind, then `step()` until it returns false.
final class Statement {
    private let handle: OpaquePointer
    private unowned let connection: Connection
    /// The connection's held inserts, checked before each step (a strong reference: no
    /// reference counting on the way to it).
    private let held: HeldInserts
    let sql: String
    /// A step failed: the cache hands it out no more (``StatementCache``).
    private(set) var failed = false

    init(connection: Connection, sql: String) throws {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw connection.error(rc, sql: sql) }
        self.handle = statement
        self.connection = connection
        self.held = connection.held
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ values: [FieldValue]) throws {
        for (index, value) in values.enumerated() { try bind(value, at: Int32(index + 1)) }
    }

    func bind(_ value: FieldValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case let .integer(v): rc = sqlite3_bind_int64(handle, index, v)
        case let .text(v): rc = bindText(v, at: index)
        }
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    /// Text by its UTF-8 bytes and their count: the implicit C-string conversion copied a
    /// short string into a new array on the heap, and SQLite then measured it with `strlen`.
    /// The bytes are lent in place (`withContiguousStorageIfAvailable`, which every native
    /// string gives): a mutable copy for `withUTF8` cost a retain and a release per value.
    private func bindText(_ text: String, at index: Int32) -> Int32 {
        let bind = { (bytes: UnsafeBufferPointer<UInt8>) in
            // An empty string still binds text, not NULL: SQLite reads no byte of a non-null
            // pointer with length 0.
            let start = UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(bitPattern: 1)!
            return sqlite3_bind_text(self.handle, index, start.assumingMemoryBound(to: CChar.self), Int32(bytes.count), csqlite_transient())
        }
        if let rc = text.utf8.withContiguousStorageIfAvailable(bind) { return rc }
        var copy = text
        return copy.withUTF8(bind)
    }

    /// Binds an id's text (a UUID's written from its words; SQLite copies it).
    func bind(id: TextID, at index: Int32) throws {
        let rc = id.withUTF8 { bytes in
            sqlite3_bind_text(
                handle, index, (bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!).assumingMemoryBound(to: CChar.self),
                Int32(bytes.count), csqlite_transient())
        }
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    func bind(blob bytes: [UInt8], at index: Int32) throws {
        let rc = bytes.withUnsafeBytes {
            sqlite3_bind_blob(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), csqlite_transient())
        }
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    // MARK: Binding in place

    /// Binds text where it lies (`SQLITE_STATIC`, no copy): the caller keeps the bytes
    /// unchanged until the statement is reset and its bindings cleared (``HeldInserts``).
    func bind(staticText bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        // An empty value still gets an address (SQLite binds NULL for a null pointer).
        let start = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        let rc = sqlite3_bind_text(handle, index, start.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    /// A blob the same way.
    func bind(staticBlob bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        let start = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        let rc = sqlite3_bind_blob(handle, index, start, Int32(bytes.count), nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    func bind(_ value: Int64, at index: Int32) throws {
        let rc = sqlite3_bind_int64(handle, index, value)
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    /// Steps once: true when a row is available, false when done.
    @discardableResult
    func step() throws -> Bool {
        if held.count != 0 { try connection.flushHeld() } // nothing observes the database past held rows
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(rc, sql: sql)
            sqlite3_reset(handle)
            failed = true
            throw error
        }
    }

    /// Runs a statement that returns no rows.
    func run(_ values: [FieldValue] = []) throws {
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// The column's storage class: `SQLITE_INTEGER`, `SQLITE_TEXT`, `SQLITE_BLOB`, …
    func type(_ column: Int32) -> Int32 { sqlite3_column_type(handle, column) }

    func optionalInt(_ column: Int32) -> Int64? { isNull(column) ? nil : int(column) }

    func text(_ column: Int32) -> String {
        // The text first, then its length (SQLite's rule for the pair): no `strlen`.
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    /// Lends the bytes of a BLOB column to `body` (valid only during the call).
    func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeRawBufferPointer(start: count == 0 ? nil : pointer, count: count))
    }

    func value(_ column: Int32) -> FieldValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: .null
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(handle, column))
        default: .text(text(column))
        }
    }
}
