/// Identifies one incarnation of a household database: a random 64-bit number drawn
/// when the database is created. Changes are numbered per replica.
///
/// A replica is not a machine: a machine whose database is wiped and re-created gets
/// a new replica id, so its new changes can never reuse numbers its peers already hold
/// (which would make them ignore its writes). The machine behind a replica is recorded
/// in the replicated `replica` entity.
public struct ReplicaID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// SQLite stores 64-bit signed integers: the bit pattern is kept.
    public init(storage: Int64) { self.rawValue = UInt64(bitPattern: storage) }
    public var storage: Int64 { Int64(bitPattern: rawValue) }

    public static func random() -> ReplicaID {
        var generator = SystemRandomNumberGenerator()
        return ReplicaID(rawValue: generator.next(upperBound: UInt64.max - 1) + 1)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// 16 lowercase hex digits.
    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    public init?(hex: String) {
        guard hex.count == 16, let value = UInt64(hex, radix: 16), value != 0 else { return nil }
        self.rawValue = value
    }
}

/// How two version vectors relate, in the terms sync reasons in.
public enum VersionOrdering: Sendable, Equatable {
    case equal
    /// The left side has seen everything the right side has, and more.
    case greater
    /// The right side has seen everything the left side has, and more.
    case lesser
    /// Each side has seen something the other has not.
    case concurrent
}

/// For each replica, the highest change number this replica has incorporated
/// (every change of that replica up to that number, or something that supersedes it).
public struct VersionVector: Sendable, Hashable, CustomStringConvertible {
    public private(set) var entries: [ReplicaID: UInt64]

    public init(_ entries: [ReplicaID: UInt64] = [:]) {
        self.entries = entries.filter { $0.value > 0 }
    }

    public subscript(_ replica: ReplicaID) -> UInt64 {
        get { entries[replica] ?? 0 }
        set { entries[replica] = newValue == 0 ? nil : newValue }
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// Total number of changes counted by this vector.
    public var total: UInt64 { entries.values.reduce(0, +) }

    public func compare(to other: VersionVector) -> VersionOrdering {
        var someGreater = false
        var someLesser = false
        for replica in Set(entries.keys).union(other.entries.keys) {
            let mine = self[replica], theirs = other[replica]
            if mine > theirs { someGreater = true }
            if mine < theirs { someLesser = true }
        }
        switch (someGreater, someLesser) {
        case (false, false): return .equal
        case (true, false): return .greater
        case (false, true): return .lesser
        case (true, true): return .concurrent
        }
    }

    /// The pointwise maximum.
    public func merging(_ other: VersionVector) -> VersionVector {
        var result = self
        for (replica, seq) in other.entries where seq > result[replica] { result[replica] = seq }
        return result
    }

    /// How many changes `other` has that this vector lacks, counted per replica.
    public func missing(from other: VersionVector) -> UInt64 {
        other.entries.reduce(0) { sum, entry in sum + (entry.value > self[entry.key] ? entry.value - self[entry.key] : 0) }
    }

    public var description: String {
        "{" + entries.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",") + "}"
    }
}
