import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import CSQLite
import PulseModel

/// Backups of a household database: consistent snapshots made by SQLite (`VACUUM INTO`,
/// from one read transaction: never a copy of a live file), written beside their final name
/// and renamed into place, so a crash (kill -9 included) leaves the previous file or the new
/// one, never a part of one under a backup's name; and the checks a file must pass before it
/// is restored.
public enum StoreBackup {
    /// What is wrong with a backup, or with writing one, in words.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case missing(String)
        case directory(String)
        case notABackup(String, reason: String)
        case newerSchema(String, found: Int, supported: Int)
        case cannotWrite(String, reason: String)

        public var description: String {
            switch self {
            case let .missing(path): "\(path): no such file"
            case let .directory(path): "\(path) is a directory, not a backup file"
            case let .notABackup(path, reason): "\(path) is not a usable House Pulse backup: \(reason)"
            case let .newerSchema(path, found, supported):
                "\(path) was made by a newer pulse-peer (schema \(found); this one reads up to \(supported)): upgrade pulse-peer"
            case let .cannotWrite(path, reason): "cannot write the backup \(path): \(reason); no backup was made there"
            }
        }
    }

    /// What a checked backup holds.
    public struct Info: Sendable, Equatable {
        public let householdID: String
        public let householdName: String?
        public let schema: Int
        public let bytes: Int
    }

    /// The suffix of a backup still being written (never read as a backup; removed by the next).
    public static let partialSuffix = ".partial"

    /// Writes a snapshot of the database at `source` to `destination` (mode 0600) and returns
    /// its size. Reads on a connection of its own (read-only, a small cache): the agent's
    /// writes go on meanwhile.
    @discardableResult
    public static func write(database source: String, to destination: String) throws(Failure) -> Int {
        let partial = destination + partialSuffix
        // SQLite writes the snapshot with a rollback journal beside it: a crash may leave both.
        unlink(partial)
        unlink(partial + "-journal")
        do {
            let connection = try Connection(path: source, mode: .readOnly)
            try connection.execute("PRAGMA cache_size = -1024")
            let statement = try connection.statement("VACUUM INTO ?1")
            try statement.bind(.text(partial), at: 1)
            while try statement.step() {}
            statement.reset()
        } catch {
            unlink(partial)
            unlink(partial + "-journal")
            throw .cannotWrite(destination, reason: Self.reason(error))
        }
        // VACUUM INTO does not sync what it wrote: this file is no one's database yet, so it
        // may be opened and closed here (DatabaseFile's POSIX rule is about live databases).
        let fd = open(partial, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard fd >= 0, fchmod(fd, 0o600) == 0, fsync(fd) == 0, fstat(fd, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            unlink(partial)
            throw .cannotWrite(destination, reason: reason)
        }
        close(fd)
        guard rename(partial, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(partial)
            throw .cannotWrite(destination, reason: reason)
        }
        let directory = String(destination.prefix(upTo: destination.lastIndex(of: "/") ?? destination.startIndex))
        let dirFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
        if dirFD >= 0 { fsync(dirFD); close(dirFD) }
        return Int(info.st_size)
    }

    /// Checks that `path` is a whole backup of a household database that this pulse-peer can
    /// read, or says what it is instead. Reads only.
    public static func inspect(_ path: String) throws(Failure) -> Info {
        var info = stat()
        guard stat(path, &info) == 0 else { throw errno == ENOENT ? .missing(path) : .notABackup(path, reason: String(cString: strerror(errno))) }
        if info.st_mode & S_IFMT == S_IFDIR { throw .directory(path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notABackup(path, reason: "not a regular file") }
        guard info.st_size > 0 else { throw .notABackup(path, reason: "it is empty") }
        // Killed between its last write and its rename, a backup's partial file can look
        // whole; it was never finished (synced, named), so it is never one.
        guard !path.hasSuffix(partialSuffix) else { throw .notABackup(path, reason: "it is a backup that was never finished (\(partialSuffix))") }
        do {
            try DatabaseFile.checkBeforeOpening(path)
        } catch {
            if case let .damaged(_, reason) = error { throw .notABackup(path, reason: reason) }
            throw .notABackup(path, reason: "\(error)")
        }
        do {
            // Immutable: SQLite makes no -wal or -shm file beside a backup it only reads.
            let uri = "file:" + path.addingPercentEncodingForURI + "?immutable=1"
            let connection = try Connection(path: uri, mode: .readOnly)
            let check = try connection.query("PRAGMA quick_check") { statement -> String in
                try statement.step() ? statement.text(0) : "no answer"
            }
            guard check == "ok" else { throw Failure.notABackup(path, reason: "damaged (\(check))") }
            let schema = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
            guard schema <= Migrations.latest else { throw Failure.newerSchema(path, found: schema, supported: Migrations.latest) }
            guard schema >= 1, try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'meta'") == 1,
                let household = try ReplicaStore.meta(connection, "household_id")?.textValue
            else {
                throw Failure.notABackup(path, reason: "it is an SQLite database, but not a household's")
            }
            let name = try? connection.query("SELECT name FROM household WHERE id = 'profile'") { statement in
                try statement.step() ? statement.text(0) : nil
            }
            return Info(householdID: household, householdName: name ?? nil, schema: schema, bytes: Int(info.st_size))
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .notABackup(path, reason: Self.reason(error))
        }
    }

    private static func reason(_ error: Error) -> String {
        guard let error = error as? SQLiteError else { return "\(error)" }
        switch error.code & 0xFF {
        case 13 /* SQLITE_FULL */: return "the disk is full"
        case 26 /* SQLITE_NOTADB */: return "it is not an SQLite database"
        case 11 /* SQLITE_CORRUPT */: return "it is damaged"
        default: return error.message
        }
    }
}

extension String {
    /// The path as the path of a `file:` URI (SQLite's rules: `%`, `?` and `#` escaped).
    var addingPercentEncodingForURI: String {
        var result = ""
        for character in self {
            switch character {
            case "%": result += "%25"
            case "?": result += "%3f"
            case "#": result += "%23"
            default: result.append(character)
            }
        }
        return result
    }
}

extension ReplicaStore {
    /// A database restored from a backup belongs to a new machine: it starts a new replica
    /// (the backup's replica was the lost machine's: its changes stay under its id, as any
    /// other machine's), has sent nothing yet, keeps its clock, and forgets `keys` of `meta`
    /// (the lost machine's own state: its remembered peers, its notices); a key ending in `*`
    /// is a pattern (SQLite's GLOB: every key starting so).
    public func beginAsRestoredReplica(dropping keys: [String]) throws {
        try inWords {
            try connection.transaction {
                let clock = try lastTimestamp()
                let fresh = ReplicaID.random()
                for (key, value) in [("replica_id", fresh.storage), ("published_seq", 0), ("hlc", clock.rawValue)] {
                    try connection.statement(
                        """
                        INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value
                        """
                    ).run([.text(key), .integer(value)])
                }
                for key in keys {
                    let sql = key.hasSuffix("*") ? "DELETE FROM meta WHERE key GLOB ?1" : "DELETE FROM meta WHERE key = ?1"
                    try connection.statement(sql).run([.text(key)])
                }
                replicaID = fresh
            }
        }
    }
}
