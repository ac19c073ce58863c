import PulseModel

/// Whose turn each period of a rotating chore is (issue 58, decision 0021). Pure: a function
/// of the household's replicated rows alone (the rotation, its first day, the days away, the
/// swaps), so every computer and phone that makes a period's task gives it to the same person.
///
/// **Fair**, as this rule means it: every period is owed equally by the people of the rotation
/// who are at home that day (a share of 1/k among k present); a turn goes to the present person
/// most behind their share, ties in the rotation's order after the last one who had a turn.
/// So, with nobody away, it is plain round robin; a person away owes nothing for the days away
/// (the others share them), and comes back exactly as far behind or ahead as they left — their
/// turn comes back when it would have, with no debt paid in a burst and no credit either.
/// A swap exchanges whoever the rotation gives two periods, after the rule: nobody's count moves;
/// it lapses when one of the two is away on the day they would take.
public enum RotationRules {
    public struct Away: Sendable, Equatable {
        public let member: String
        public let first: IsoDate
        public let last: IsoDate
        public init(member: String, first: IsoDate, last: IsoDate) {
            self.member = member
            self.first = first
            self.last = last
        }
    }

    /// Two periods exchanged; applied in the order given (the order they were made).
    public struct Swap: Sendable, Equatable {
        public let first: IsoDate
        public let second: IsoDate
        public init(first: IsoDate, second: IsoDate) {
            self.first = first
            self.second = second
        }
    }

    public struct Turn: Sendable, Equatable, CustomStringConvertible {
        public let period: IsoDate
        /// Nil when everyone of the rotation is away that day.
        public var member: String?
        public init(period: IsoDate, member: String?) {
            self.period = period
            self.member = member
        }
        public var description: String { "\(period) \(member ?? "-")" }
    }

    /// At most this many people in one rotation.
    public static let maxPeople = 12
    /// The periods walked at most (a daily chore's eleven years): the walk's bound.
    static let maxPeriods = 4000

    /// The turns of `schedule`'s periods from `start` through `end`, for the people of
    /// `rotation` in turn order (distinct ids).
    public static func turns(
        schedule: String, rotation: [String], from start: IsoDate, through end: IsoDate, away: [Away] = [],
        swaps: [Swap] = []
    ) -> [Turn] {
        let people = rotation.count
        guard people > 0, people <= maxPeople, start <= end else { return [] }
        // Swaps may name a period past `end`: the walk goes as far as the last one named.
        let last = swaps.reduce(end) { max($0, $1.first, $1.second) }
        // Every share in whole units: 1/k of a period is `unit / k`, exactly.
        let unit = (1...people).reduce(1) { lcm($0, $1) }
        var behind = [Int](repeating: 0, count: people)
        var previous = people - 1 // the first tie goes to the first person named
        var turns: [Turn] = []
        var day = start
        while day <= last, turns.count < maxPeriods {
            defer { day = Days.adding(1, to: day) }
            guard Household.isDue(schedule, on: day) else { continue }
            let present = (0..<people).filter { !isAway(rotation[$0], on: day, away) }
            guard !present.isEmpty else {
                turns.append(Turn(period: day, member: nil))
                continue
            }
            for person in present { behind[person] += unit / present.count }
            let most = present.map { behind[$0] }.max()!
            let chosen = (1...people).lazy.map { (previous + $0) % people }.first { present.contains($0) && behind[$0] == most }!
            behind[chosen] -= unit
            previous = chosen
            turns.append(Turn(period: day, member: rotation[chosen]))
        }
        if !swaps.isEmpty {
            var index: [IsoDate: Int] = [:]
            for (position, turn) in turns.enumerated() { index[turn.period] = position }
            for swap in swaps {
                guard let a = index[swap.first], let b = index[swap.second] else { continue }
                // A swap lapses when it would give a day to someone away that day.
                if let member = turns[b].member, isAway(member, on: turns[a].period, away) { continue }
                if let member = turns[a].member, isAway(member, on: turns[b].period, away) { continue }
                (turns[a].member, turns[b].member) = (turns[b].member, turns[a].member)
            }
        }
        return last == end ? turns : Array(turns.prefix { $0.period <= end })
    }

    static func isAway(_ member: String, on day: IsoDate, _ away: [Away]) -> Bool {
        away.contains { $0.member == member && $0.first <= day && day <= $0.last }
    }

    /// Distinct ids, in the order first named.
    public static func distinct(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
    }

    private static func lcm(_ a: Int, _ b: Int) -> Int { a / gcd(a, b) * b }
    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}
