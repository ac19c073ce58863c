import PulseModel
/// Errors of the replicated store. Each says what was refused and why; a refused
/// write or batch changes nothing.
public enum StoreError: Error, CustomStringConvertible {
    case newerSchema(found: Int, supported: Int)
    case invalidChange(ChangeValidationError, origin: ReplicaID, seq: UInt64)
    case clock(ClockError, origin: ReplicaID, seq: UInt64)
    case immutableField(EntityKind, rowID: String, field: String)
    case foreignOwnChange(seq: UInt64)
    /// A change (or coverage, or stub) of an origin numbered after the seal of its history
    /// (Histories.swift): sent by a peer that has not learnt of the fork yet.
    case beyondSeal(origin: ReplicaID, seq: UInt64, seal: UInt64)
    /// A change under a number this database holds another change for (Histories.swift).
    case anotherHistory(origin: ReplicaID, seq: UInt64)
    case constraint(EntityKind, rowID: String, SQLiteError)
    case notReplicaDatabase(path: String)
    case corruptRow(EntityKind, rowID: String, reason: String)
    case corruptIndex(String)
    case sqlite(SQLiteError)
    /// Another process held the write lock for longer than the busy timeout.
    case busy(path: String, holder: String?)
    /// The disk holding the database is full; the transaction was rolled back.
    case diskFull(directory: String)

    /// Whether the condition passes by itself (a full disk, a busy lock): retry later.
    public var isTransient: Bool {
        switch self {
        case .busy, .diskFull: true
        default: false
        }
    }

    /// What a person can do about a damaged database.
    package static let recovery =
        "Keep the file for inspection, and `pulse-peer join` the household again in a fresh home: "
        + "a peer sends a whole copy."

    public var description: String {
        switch self {
        case let .newerSchema(found, supported):
            "the database has schema version \(found), newer than this pulse-peer understands (\(supported)); upgrade pulse-peer"
        case let .invalidChange(error, origin, seq):
            "rejected change \(origin)#\(seq): \(error)"
        case let .clock(error, origin, seq):
            "rejected change \(origin)#\(seq): \(error)"
        case let .immutableField(entity, rowID, field):
            "\(entity.rawValue) \(rowID): \(field) is set once and cannot change"
        case let .foreignOwnChange(seq):
            "a peer sent change #\(seq) in this replica's own name, which this replica never made"
        case let .anotherHistory(origin, seq):
            "change \(origin)#\(seq) is not the change this machine holds under that number: that replica's history forked; the next connection finds and heals it"
        case let .beyondSeal(origin, seq, seal):
            "change \(origin)#\(seq) is after the end of that replica's history (#\(seal): it forked and was healed); reconnect to learn of it"
        case let .constraint(entity, rowID, error):
            "\(entity.rawValue) \(rowID) breaks a rule of the database: \(error.message)"
        case let .notReplicaDatabase(path):
            "\(path) is not a pulse-peer database"
        case let .corruptRow(entity, rowID, reason):
            "\(entity.rawValue) \(rowID): the stored versions are unreadable (\(reason)); the database was damaged or edited by hand. \(Self.recovery)"
        case let .corruptIndex(reason):
            "the change index disagrees with the rows (\(reason)); the database was damaged or edited by hand. \(Self.recovery)"
        case let .sqlite(error):
            error.description
        case let .busy(path, holder):
            "the household database \(path) is busy: \(holder ?? "another program") has held its write lock for more than "
                + "\(Connection.busyTimeoutMilliseconds / 1000) s. Wait for it to finish (or stop it), then retry; nothing was changed"
        case let .diskFull(directory):
            "the disk holding \(directory) is full: free some space there and retry; nothing was changed"
        }
    }
}
