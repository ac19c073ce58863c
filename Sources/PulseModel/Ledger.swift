/// The kids' ledger rule: a kid's balance and the fate of each entry, derived from the
/// append-only entries alone, so every replica that holds the same entries reaches the
/// same result by itself, whatever order they arrived in (docs/ARCHITECTURE.md, "The kids'
/// ledger").
///
/// Entries are taken in the order of their stamps (`created`, then `id`). An earn adds its
/// peanuts, unless the same kid was already paid for the same item on the same day (a
/// chore marked done on two machines that had not synced yet): that one is *declined as a
/// repeat*. A spend takes its peanuts if the balance covers them; otherwise it is
/// *declined* — it takes nothing (the kid keeps the peanuts: a refund, shown), and the
/// reward is not in the basket. So no balance is ever negative, and the same entries are
/// declined everywhere.
public enum Ledger {
    public struct Entry: Sendable, Equatable {
        public enum Kind: String, Sendable, Codable { case earn, spend }
        public let id: String
        public let kind: Kind
        public let peanuts: Int
        /// The catalogue item, nil for an adult's adjustment.
        public let item: String?
        /// The local calendar day it was marked (`YYYY-MM-DD`), for earns from an item;
        /// nil when it does not matter (spends, adjustments).
        public let day: String?
        /// The ordering stamp (a hybrid timestamp): earlier stamps are taken first.
        public let created: Int64

        public init(id: String, kind: Kind, peanuts: Int, item: String?, day: String?, created: Int64) {
            self.id = id
            self.kind = kind
            self.peanuts = peanuts
            self.item = item
            self.day = day
            self.created = created
        }
    }

    public enum Outcome: String, Sendable, Codable, Equatable {
        case counted
        /// A spend the balance did not cover when its turn came: nothing taken.
        case declinedOverspend = "declined-overspend"
        /// An earn for an item already paid to this kid that day.
        case declinedRepeat = "declined-repeat"
    }

    public struct Resolution: Sendable, Equatable {
        public var balance = 0
        /// Entry id → outcome, for every entry.
        public var outcomes: [String: Outcome] = [:]
        /// The entries in the order they were taken.
        public var order: [String] = []
    }

    /// Resolves one kid's entries.
    public static func resolve(_ entries: [Entry]) -> Resolution {
        var result = Resolution()
        var paid = Set<String>()
        for entry in entries.sorted(by: { ($0.created, $0.id) < ($1.created, $1.id) }) {
            result.order.append(entry.id)
            switch entry.kind {
            case .earn:
                if let item = entry.item, let day = entry.day {
                    guard paid.insert(item + "\u{0}" + day).inserted else {
                        result.outcomes[entry.id] = .declinedRepeat
                        continue
                    }
                }
                result.balance += entry.peanuts
                result.outcomes[entry.id] = .counted
            case .spend:
                guard result.balance >= entry.peanuts else {
                    result.outcomes[entry.id] = .declinedOverspend
                    continue
                }
                result.balance -= entry.peanuts
                result.outcomes[entry.id] = .counted
            }
        }
        return result
    }

    /// The day an entry id carries: earns from an item have ids `dYYYYMMDD-…` (the id is
    /// the one part of a row every version of the schema accepts, and it is set once).
    public static func day(fromID id: String) -> String? {
        let chars = Array(id.utf8)
        guard chars.count > 10, chars[0] == UInt8(ascii: "d"), chars[9] == UInt8(ascii: "-"),
            chars[1...8].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        let digits = String(decoding: chars[1...8], as: UTF8.self)
        return "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.suffix(2))"
    }

    /// The id of a new earn entry for an item on `day` (`YYYY-MM-DD`): the day, then a
    /// random part (so two machines never write the same row).
    public static func earnID(day: String, random: String) -> String {
        "d" + day.filter { $0 != "-" } + "-" + random
    }
}
