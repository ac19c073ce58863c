import CSQLite
import Foundation
import PeerSync
import PulseModel
import PulseStore

/// The floors every figure is compared with, measured in the same run.
enum Baselines {
    /// Round trip of 64 bytes over loopback TCP (two threads, blocking sockets), in µs.
    static func tcpRoundTrip(samples: Int = 2000) throws -> [Double] {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var one: Int32 = 1
        setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        listen(server, 1)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(server, $0, &length) } }
        let echo = Thread {
            let client = accept(server, nil, nil)
            var yes: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            var buffer = [UInt8](repeating: 0, count: 64)
            while recv(client, &buffer, 64, Int32(MSG_WAITALL)) == 64 { _ = send(client, buffer, 64, 0) }
            close(client)
        }
        echo.start()
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd); close(server) }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var buffer = [UInt8](repeating: 7, count: 64)
        var times: [Double] = []
        for _ in 0..<samples {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = send(fd, buffer, 64, 0)
            _ = recv(fd, &buffer, 64, Int32(MSG_WAITALL))
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
        }
        return times
    }

    /// A plain SQLite database with the same durability and cache settings as the store.
    final class RawDatabase {
        let db: OpaquePointer
        init(path: String) {
            // The library as the store sets it up (memory statistics off), whoever opens first.
            SQLiteLibrary.configure()
            var handle: OpaquePointer?
            sqlite3_open(path, &handle)
            db = handle!
            exec("PRAGMA journal_mode = WAL")
            exec("PRAGMA synchronous = FULL")
            exec("PRAGMA cache_size = -\(ReplicaStore.cacheKibibytes)") // the store's tuning too
            // The same table, constraints and index as the store's `shopping_item`.
            exec(
                """
                CREATE TABLE IF NOT EXISTS item (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
                    state TEXT NOT NULL CHECK (state = 'active' OR state = 'restock' OR state = 'deleted'),
                    listed INTEGER NOT NULL CHECK (listed >= 0),
                    name_key TEXT NOT NULL CHECK (length(name_key) >= 1)
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS item_by_state ON item (state, listed);
                CREATE INDEX IF NOT EXISTS item_by_name_key ON item (name_key) WHERE state <> 'deleted';
                """)
        }
        deinit { sqlite3_finalize(statement); sqlite3_close_v2(db) }
        func exec(_ sql: String) { sqlite3_exec(db, sql, nil, nil, nil) }

        /// Prepared once, as the store keeps its statements: a write of one row pays no
        /// parsing.
        private lazy var statement: OpaquePointer? = {
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, "INSERT INTO item (id, name, state, listed, name_key) VALUES (?1, ?2, 'active', ?3, ?4)", -1, &statement, nil)
            return statement
        }()

        /// The lookup a plain program makes before adding an item, for the household's rule
        /// that an item is never twice on the list (issue 52: any case; the store's too).
        private lazy var lookup: OpaquePointer? = {
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, "SELECT id FROM item WHERE name_key = ?1 AND state <> 'deleted'", -1, &statement, nil)
            return statement
        }()

        /// The next listing key: rising from call to call, as the store's (a clock), so
        /// that each insert lands at the right edge of the index as the store's does. (A
        /// key restarting at 0 in each call put every insert of a later call beside an
        /// older entry, all over the index: the plain insert got slower with each call.)
        private var listed: Int64 = 0

        /// Inserts `count` rows, `perTransaction` to a transaction; returns seconds. Ids
        /// are the store's (version 7 UUIDs, time-ordered). `lookingUp`: each name is first
        /// looked up among the items not deleted, as a local addition does (the household's
        /// rule); a catch-up's rows are inserted as they come.
        func insert(_ count: Int, perTransaction: Int, lookingUp: Bool = false) -> Double {
            let statement = self.statement, lookup = self.lookup
            let start = DispatchTime.now().uptimeNanoseconds
            for i in 0..<count {
                if i % perTransaction == 0 { exec("BEGIN IMMEDIATE") }
                let name = "Item \(listed)", key = name.nameKey
                // Bound by bytes and length, as the store binds text.
                func bind(_ text: String, _ statement: OpaquePointer?, at index: Int32) {
                    var text = text
                    _ = text.withUTF8 {
                        sqlite3_bind_text(
                            statement, index, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), Int32($0.count),
                            csqlite_transient())
                    }
                }
                if lookingUp {
                    bind(key, lookup, at: 1)
                    while sqlite3_step(lookup) == SQLITE_ROW {}
                    sqlite3_reset(lookup)
                }
                bind(RowIDRules.newRowID(), statement, at: 1)
                bind(name, statement, at: 2)
                sqlite3_bind_int64(statement, 3, listed)
                bind(key, statement, at: 4)
                listed += 1
                sqlite3_step(statement)
                sqlite3_reset(statement)
                if i % perTransaction == perTransaction - 1 || i == count - 1 { exec("COMMIT") }
            }
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
    }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}
