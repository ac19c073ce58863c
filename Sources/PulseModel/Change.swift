/// The last-writer-wins order of writes: by hybrid timestamp, ties by replica id.
/// Every replica orders two stamps the same way.
public struct Stamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let hlc: HybridTimestamp
    public let origin: ReplicaID

    public init(hlc: HybridTimestamp, origin: ReplicaID) {
        self.hlc = hlc
        self.origin = origin
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.hlc, lhs.origin) < (rhs.hlc, rhs.origin)
    }

    public var description: String { "\(hlc)@\(origin)" }
}

/// One field set by a change. `base` is the stamp of the value the author's replica
/// held for this field when it wrote (nil: none); a receiver whose current value has
/// another stamp knows the two writes were concurrent and logs the conflict.
public struct FieldWrite: Sendable, Hashable {
    public let field: String
    public let value: FieldValue
    public let base: Stamp?

    public init(field: String, value: FieldValue, base: Stamp? = nil) {
        self.field = field
        self.value = value
        self.base = base
    }
}

/// One write to one row, as it travels between replicas: replica `origin` numbered it
/// `seq` (1, 2, 3 … per replica) and stamped it `hlc`; `member` is the household member
/// who made it (nil for the system).
public struct Change: Sendable, Hashable {
    public let origin: ReplicaID
    public let seq: UInt64
    public let hlc: HybridTimestamp
    public let member: String?
    public let entity: EntityKind
    public let rowID: String
    public let fields: [FieldWrite]

    public init(origin: ReplicaID, seq: UInt64, hlc: HybridTimestamp, member: String?,
                entity: EntityKind, rowID: String, fields: [FieldWrite]) {
        self.origin = origin
        self.seq = seq
        self.hlc = hlc
        self.member = member
        self.entity = entity
        self.rowID = rowID
        self.fields = fields
    }

    public var stamp: Stamp { Stamp(hlc: hlc, origin: origin) }
}

/// A claim that travels with a batch: the sender has given the receiver everything of
/// replica `origin` numbered in `(after, upTo]` (or what supersedes it). A receiver
/// that already holds `origin` up to `after` (or more) may advance its vector to `upTo`;
/// otherwise there is a gap and it must not.
public struct Coverage: Sendable, Hashable {
    public let origin: ReplicaID
    public let after: UInt64
    public let upTo: UInt64

    public init(origin: ReplicaID, after: UInt64, upTo: UInt64) {
        self.origin = origin
        self.after = after
        self.upTo = upTo
    }
}

/// The unit a replica applies atomically.
public struct DeltaBatch: Sendable, Hashable {
    public var changes: [Change]
    public var coverage: [Coverage]

    public init(changes: [Change] = [], coverage: [Coverage] = []) {
        self.changes = changes
        self.coverage = coverage
    }

    public var isEmpty: Bool { changes.isEmpty && coverage.isEmpty }
}
