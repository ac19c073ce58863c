import Crypto
import PulseModel

/// How two holders tell that they hold different histories under one replica id, and how
/// every holder heals them the same way (docs/PROTOCOL.md §5, "Histories that forked"). Pure:
/// the session carries out what it says with the store.
public enum HistoryRules {
    /// What one origin's entries say, this side's beside the peer's.
    public enum Verdict: Sendable, Equatable {
        /// Nothing to do.
        case same
        /// The two hold different changes under one number at or before `upTo`: exchange
        /// the stamps `1…upTo` (HISTORY) and heal at the fork point.
        case forked(upTo: UInt64)
        /// The peer's history of the origin ends at `seal`, this side's goes on: move this
        /// side's changes after it to their branch (``branch(of:forkAt:hlc:)``) and seal.
        case sealBeyond(seal: UInt64)
        /// The peer's history ends at `seal`, and this side holds nothing beyond: record it.
        case adoptSeal(seal: UInt64)
    }

    /// The verdict on one origin. `mineAtTheirs`: this side's stamp at the peer's number
    /// (0 when unknown, or when this side's entry is below it: the peer judges then).
    public static func verdict(mine: HistoryHead, theirs: HistoryHead, mineAtTheirs: UInt64) -> Verdict {
        if theirs.seq > 0, theirs.seq <= mine.seq, theirs.check != 0, mineAtTheirs != 0, theirs.check != HistoryHead.check(mineAtTheirs) {
            return .forked(upTo: theirs.seq)
        }
        if let seal = theirs.seal, mine.seal.map({ seal < $0 }) ?? true {
            return mine.seq > seal ? .sealBeyond(seal: seal) : .adoptSeal(seal: seal)
        }
        return .same
    }

    /// The first number at which two holders' histories (stamps `1…`, 0 unknown) may differ,
    /// or nil when they agree wherever both are known. Histories that forked share a prefix
    /// and differ everywhere after the fork (each stamp of one origin is later than the one
    /// before), so the fork is after the last number both know alike before the first they
    /// know apart; numbers between those that one side does not know are taken as forked —
    /// the cautious side: a change both hold that is re-keyed on both sides is held twice
    /// under two ids, with the same values, which merge alike.
    public static func forkPoint(mine: [UInt64], theirs: [UInt64]) -> UInt64? {
        let count = min(mine.count, theirs.count)
        guard let differs = (0..<count).first(where: { mine[$0] != 0 && theirs[$0] != 0 && mine[$0] != theirs[$0] }) else { return nil }
        // The last number (1-based) both know alike before the first they know apart; 0: none.
        var agreed = 0
        for index in stride(from: differs - 1, through: 0, by: -1) where mine[index] != 0 && mine[index] == theirs[index] {
            agreed = index + 1
            break
        }
        return UInt64(agreed + 1)
    }

    /// The replica id under which a branch of `origin`'s history, forked at `forkAt` and
    /// starting there with the stamp `hlc`, travels on: the first 8 bytes (big-endian) of
    /// SHA-256("house-pulse/1 branch" ‖ 0x00 ‖ origin ‖ forkAt ‖ hlc), each a u64be; never 0.
    /// Every holder of the same branch derives the same id.
    public static func branch(of origin: ReplicaID, forkAt: UInt64, hlc: UInt64) -> ReplicaID {
        var input = Array("house-pulse/1 branch".utf8) + [0]
        for value in [origin.rawValue, forkAt, hlc] { withUnsafeBytes(of: value.bigEndian) { input += $0 } }
        let digest = Array(SHA256.hash(data: input))
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return ReplicaID(rawValue: value == 0 ? 1 : value)
    }
}
