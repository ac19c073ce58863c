/// What a replica's history looks like at its end, as a VECTOR entry says it from protocol 9
/// (docs/PROTOCOL.md §5, "Histories that forked"): the number, a check of the `hlc` of the
/// change of that number (0: not known here — overwritten before this machine kept stamps),
/// and where the history of that replica ends for good when a fork was healed (`seal`).
public struct HistoryHead: Sendable, Hashable {
    public var seq: UInt64
    /// ``check(_:)`` of the stamp at `seq`: 4 bytes on the wire instead of 8, so that an in-sync
    /// reconnection stays within its 256 bytes; two different stamps share a check once in 2³².
    public var check: UInt32
    /// The last number of this origin's history, everywhere: its changes after it were
    /// re-keyed (``ChangeStub``, ``HistoryHeads``); nil while it has never forked.
    public var seal: UInt64?

    public init(seq: UInt64, stamp: UInt64 = 0, seal: UInt64? = nil) {
        self.init(seq: seq, check: Self.check(stamp), seal: seal)
    }

    public init(seq: UInt64, check: UInt32, seal: UInt64? = nil) {
        self.seq = seq
        self.check = check
        self.seal = seal
    }

    /// The check of a stamp: 0 for 0 (unknown); else the high 32 bits of SplitMix64's finalizer
    /// of it (a bijective mix: stamps that differ in any bit give unrelated checks), never 0.
    public static func check(_ stamp: UInt64) -> UInt32 {
        guard stamp != 0 else { return 0 }
        var z = stamp
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return max(1, UInt32(truncatingIfNeeded: z >> 32))
    }
}

/// A VECTOR from protocol 9: the version vector with, for each origin, the stamp of the
/// change at its entry and the origin's seal.
public struct HistoryHeads: Sendable, Hashable, CustomStringConvertible {
    public var entries: [ReplicaID: HistoryHead]

    public init(_ entries: [ReplicaID: HistoryHead] = [:]) {
        self.entries = entries.filter { $0.value.seq > 0 || $0.value.seal != nil }
    }

    /// The heads of a plain vector (no stamps known, no seals).
    public init(vector: VersionVector) {
        self.init(vector.entries.mapValues { HistoryHead(seq: $0) })
    }

    public var vector: VersionVector { VersionVector(entries.mapValues(\.seq)) }

    public subscript(_ replica: ReplicaID) -> HistoryHead {
        entries[replica] ?? HistoryHead(seq: 0)
    }

    public var description: String {
        "{" + entries.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.seq)" + ($0.value.seal.map { "|\($0)" } ?? "") }.joined(separator: ",") + "}"
    }
}

/// A number of a replica whose change is overwritten everywhere it is held: only its stamp
/// travels (protocol 9), so that every holder knows the `hlc` of each number it covers and
/// two holders can tell whether they hold the same history.
public struct ChangeStub: Sendable, Hashable {
    public let origin: ReplicaID
    public let seq: UInt64
    public let hlc: UInt64

    public init(origin: ReplicaID, seq: UInt64, hlc: UInt64) {
        self.origin = origin
        self.seq = seq
        self.hlc = hlc
    }
}

/// One side's stamps of an origin's changes `from…`, in order (0: not known), sent when two
/// peers found that they hold different histories under one replica id (HISTORY, protocol 9).
public struct HistoryStamps: Sendable, Hashable {
    public let origin: ReplicaID
    /// The number of the first stamp.
    public let from: UInt64
    /// The last number the exchange compares (both sides' lower entry): the stamps of
    /// `from…upTo` arrive in one or more messages.
    public let upTo: UInt64
    public let hlcs: [UInt64]

    public init(origin: ReplicaID, from: UInt64, upTo: UInt64, hlcs: [UInt64]) {
        self.origin = origin
        self.from = from
        self.upTo = upTo
        self.hlcs = hlcs
    }
}
