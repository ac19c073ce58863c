/// A hybrid logical clock timestamp packed into one 64-bit integer:
/// the upper 48 bits are Unix milliseconds, the lower 16 bits a logical counter.
///
/// Packing makes "the next timestamp" a plain `max(physical, last + 1)`: when the
/// counter overflows it carries into the millisecond part, which keeps the clock
/// strictly monotonic without a special case. Timestamps are totally ordered;
/// ties between machines are broken by ``ReplicaID`` in ``Stamp``.
public struct HybridTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public static let logicalBits: Int64 = 16
    public let rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }

    public init(milliseconds: Int64, counter: UInt16 = 0) {
        self.rawValue = (milliseconds << Self.logicalBits) | Int64(counter)
    }

    public var milliseconds: Int64 { rawValue >> Self.logicalBits }
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue & 0xFFFF) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "\(milliseconds).\(counter)" }
}

/// Errors of the clock: a remote timestamp too far in the future is refused, so that
/// one machine with a wrong clock cannot drag every replica's clock (and the winner of
/// every later edit) forward.
public enum ClockError: Error, Equatable, CustomStringConvertible {
    case remoteTooFarAhead(remote: HybridTimestamp, localMilliseconds: Int64, maxDriftMilliseconds: Int64)

    public var description: String {
        switch self {
        case let .remoteTooFarAhead(remote, local, drift):
            let ahead = remote.milliseconds - local
            return "a timestamp is \(ahead / 1000) s ahead of this machine's clock (limit \(drift / 1000) s); "
                + "check the clocks of both machines"
        }
    }
}

/// The state machine of a hybrid logical clock (Kulkarni et al., 2014).
/// Pure: the physical time is passed in, so tests can make it jump.
public struct HybridClock: Sendable {
    /// How far ahead of local physical time a remote timestamp may be.
    public static let defaultMaxDriftMilliseconds: Int64 = 10 * 60 * 1000

    public private(set) var last: HybridTimestamp
    public let maxDriftMilliseconds: Int64

    public init(
        last: HybridTimestamp = HybridTimestamp(rawValue: 0),
        maxDriftMilliseconds: Int64 = HybridClock.defaultMaxDriftMilliseconds
    ) {
        self.last = last
        self.maxDriftMilliseconds = maxDriftMilliseconds
    }

    /// A timestamp for a local event: greater than every timestamp seen so far,
    /// even when the physical clock went backwards.
    public mutating func next(physicalMilliseconds now: Int64) -> HybridTimestamp {
        let physical = HybridTimestamp(milliseconds: now).rawValue
        last = HybridTimestamp(rawValue: max(physical, last.rawValue + 1))
        return last
    }

    /// Checks a remote timestamp against the drift bound without changing the clock.
    public func check(remote: HybridTimestamp, physicalMilliseconds now: Int64) throws(ClockError) {
        if remote.milliseconds > now + maxDriftMilliseconds {
            throw .remoteTooFarAhead(remote: remote, localMilliseconds: now, maxDriftMilliseconds: maxDriftMilliseconds)
        }
    }

    /// Merges a remote timestamp (a receive event): later local timestamps are
    /// greater than it. Refuses one beyond the drift bound and leaves the clock as it was.
    public mutating func observe(remote: HybridTimestamp, physicalMilliseconds now: Int64) throws(ClockError) {
        try check(remote: remote, physicalMilliseconds: now)
        if remote > last { last = remote }
    }
}
