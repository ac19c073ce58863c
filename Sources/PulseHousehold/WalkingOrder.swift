import PulseModel

/// The shop's walking order, learned from the family's own check-offs (issue 57, ★). Pure: no
/// I/O, table-tested (WalkingOrderTests); the household reads the check-offs
/// (`shopping_checkoff`, replicated) and every replica computes the same order from the same rows.
///
/// **The method.** From the newest ``evidence`` check-offs and corrections (every replica holds
/// the same rows, so reads the same newest ones):
/// 1. *Trips.* A trip is a run of check-offs by one member, each within ``tripGap`` of the one
///    before (a person walking the shop). A name checked twice in a trip counts at its first place.
///    Trips of one item say nothing of an order and are left out.
/// 2. *Pairwise precedence.* For the items to be ordered, each trip adds one vote "x before y" for
///    every pair it holds in that order (all pairs, not just neighbours: an item missing from a
///    trip leaves the others' votes intact).
/// 3. *Ranking (Copeland).* Each item scores a point for every other item it precedes in most
///    trips holding both, half a point for a tie; the higher score comes first. Ties go to the
///    average relative place in the trips holding it (0 first … 1 last), then to the order as added.
///    A majority vote per pair is what makes one out-of-order check-off per trip harmless: it
///    moves one vote of a pair, not the ranking.
/// 4. *Items no trip placed beside another item of the list* go where the trips put them on
///    average, else where they put a name sharing a word with them (the last word first: "oat
///    milk" where "milk" is walked), else at the end — in the order they were added.
///
/// Names are compared by their folded key (``String/nameKey``), as the list compares them.
public enum WalkingOrder {
    /// The newest check-offs and corrections the order is learned from (≈ 100 trips of 40
    /// items; years of a family's weekly shop): the learning costs the same after any length
    /// of history, and a shop that moves its aisles is learned anew as its old trips leave.
    public static let evidence = 4_000

    /// Check-offs further apart than this (milliseconds) are two trips.
    public static let tripGap: Int64 = 15 * 60_000

    /// One check-off: the item's name key, who checked it, when (the hybrid clock's reading: two
    /// check-offs in one millisecond keep the order they were made in).
    public struct CheckOff: Sendable, Equatable {
        public let name: String
        public let member: String?
        public let at: HybridTimestamp
        public init(name: String, member: String?, at: HybridTimestamp) {
            self.name = name
            self.member = member
            self.at = at
        }
    }

    /// The trips of `checkoffs` (any order), each its name keys in the order walked; the trips
    /// in the order they began.
    public static func trips(_ checkoffs: [CheckOff]) -> [[String]] {
        let sorted = checkoffs.sorted { ($0.at.rawValue, $0.member ?? "", $0.name) < ($1.at.rawValue, $1.member ?? "", $1.name) }
        var open: [String: (last: Int64, index: Int)] = [:] // per member: the trip being walked
        var trips: [[String]] = []
        for checkoff in sorted {
            let who = checkoff.member ?? ""
            let at = checkoff.at.milliseconds
            if let trip = open[who], at - trip.last <= tripGap {
                if !trips[trip.index].contains(checkoff.name) { trips[trip.index].append(checkoff.name) }
                open[who] = (at, trip.index)
            } else {
                trips.append([checkoff.name])
                open[who] = (at, trips.count - 1)
            }
        }
        return trips.filter { $0.count > 1 }
    }

    /// A person's correction: `name` put after `after` and before `before` (name keys) at `at`.
    public struct Correction: Sendable, Equatable {
        public let name: String
        public let after: String?
        public let before: String?
        public let at: HybridTimestamp
        public init(name: String, after: String?, before: String?, at: HybridTimestamp) {
            self.name = name
            self.after = after
            self.before = before
            self.at = at
        }
    }

    /// `names` in the walking order `trips` teach, then each of `corrections` (oldest first) that
    /// no check-off of its item has followed since (`lastChecked`: a name's last check-off):
    /// the item moved right after its `after`, or right before its `before` when `after` is not
    /// on the list (neither: left where it is). A correction holds until the item is walked again;
    /// from then on the trips, which the correction does not outvote, decide.
    public static func order(_ names: [String], trips: [[String]], corrections: [Correction], lastChecked: [String: HybridTimestamp]) -> [String] {
        var result = order(names, trips: trips)
        for correction in corrections.sorted(by: { $0.at < $1.at }) where (lastChecked[correction.name]?.rawValue ?? .min) <= correction.at.rawValue {
            guard let from = result.firstIndex(of: correction.name) else { continue }
            var moved = result
            moved.remove(at: from)
            if let after = correction.after, let anchor = moved.firstIndex(of: after) {
                moved.insert(correction.name, at: anchor + 1)
            } else if let before = correction.before, let anchor = moved.firstIndex(of: before) {
                moved.insert(correction.name, at: anchor)
            } else {
                continue
            }
            result = moved
        }
        return result
    }

    /// `names` (name keys, in the order added) in the walking order `trips` teach.
    public static func order(_ names: [String], trips: [[String]]) -> [String] {
        let count = names.count
        guard count > 1 else { return names }
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name] == nil { index[name] = position }
        // before[x * count + y]: the trips walking x before y.
        var before = [Int32](repeating: 0, count: count * count)
        var placeSum = [Double](repeating: 0, count: count)
        var seenIn = [Int](repeating: 0, count: count)
        for trip in trips {
            let walked = trip.compactMap { index[$0] }
            guard walked.count > 1 else { continue } // alone of the list in its trip: placed by its own place, below
            let span = Double(walked.count - 1)
            for (i, x) in walked.enumerated() {
                placeSum[x] += Double(i) / span
                seenIn[x] += 1
                for y in walked[(i + 1)...] { before[x * count + y] += 1 }
            }
        }
        var score = [Double](repeating: 0, count: count)
        for x in 0..<count {
            for y in (x + 1)..<count {
                let xy = before[x * count + y], yx = before[y * count + x]
                if xy > yx {
                    score[x] += 1
                } else if yx > xy {
                    score[y] += 1
                } else if xy > 0 {
                    score[x] += 0.5
                    score[y] += 0.5
                }
            }
        }
        let seen = (0..<count).filter { seenIn[$0] > 0 && index[names[$0]] == $0 }
        let ranked = seen.sorted { x, y in
            if score[x] != score[y] { return score[x] > score[y] }
            let px = placeSum[x] / Double(seenIn[x]), py = placeSum[y] / Double(seenIn[y])
            if px != py { return px < py }
            return x < y
        }
        var result = ranked.map { names[$0] }
        // Not placed by a pair: where the trips put it (walked with no other item of the list),
        // else where they put a name sharing a word with it ("oat milk" where "milk" is walked),
        // else at the end; in the order added.
        let places = averagePlaces(trips)
        let placed = result.map { places[$0] ?? 1 }
        var atEnd: [String] = []
        var inserted: [(after: Int, name: String)] = []
        for position in 0..<count where seenIn[position] == 0 || index[names[position]] != position {
            let name = names[position]
            guard index[name] == position, let place = places[name] ?? relatedPlace(name, places) else {
                atEnd.append(name) // no related name walked (or the same name twice on the list)
                continue
            }
            inserted.append((placed.lastIndex { $0 <= place } ?? -1, name))
        }
        var groups: [Int: [String]] = [:]
        for (after, name) in inserted { groups[after, default: []].append(name) }
        // From the last place back, so that earlier places stay where they were.
        for after in groups.keys.sorted(by: >) { result.insert(contentsOf: groups[after] ?? [], at: after + 1) }
        return result + atEnd
    }

    /// Each walked name's average relative place in the trips holding it (0 first … 1 last).
    static func averagePlaces(_ trips: [[String]]) -> [String: Double] {
        var sum: [String: Double] = [:], seen: [String: Int] = [:]
        for trip in trips where trip.count > 1 {
            let span = Double(trip.count - 1)
            for (i, name) in trip.enumerated() {
                sum[name, default: 0] += Double(i) / span
                seen[name, default: 0] += 1
            }
        }
        return sum.reduce(into: [:]) { $0[$1.key] = $1.value / Double(seen[$1.key] ?? 1) }
    }

    /// The place of the walked name sharing a word (3 letters or more) with `name`: its last word
    /// first ("oat milk" → "milk", "soy milk"); among several, the smallest place, then the name.
    static func relatedPlace(_ name: String, _ places: [String: Double]) -> Double? {
        let split = { (text: String) in text.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init) }
        let words = split(name).filter { $0.count >= 3 }
        for word in words.reversed() {
            let related = places.filter { split($0.key).contains(word) }
            if let best = related.min(by: { ($0.value, $0.key) < ($1.value, $1.key) }) { return best.value }
        }
        return nil
    }

    /// Kendall's τ between two orders of the same names (1: the same, −1: reversed): how far a
    /// learned order is from the shop's (the tests' and the bench's measure).
    public static func kendallTau(_ a: [String], _ b: [String]) -> Double {
        let place = Dictionary(b.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let ranks = a.compactMap { place[$0] }
        let n = ranks.count
        guard n > 1 else { return 1 }
        var concordant = 0, discordant = 0
        for i in 0..<n {
            for j in (i + 1)..<n {
                if ranks[i] < ranks[j] { concordant += 1 } else if ranks[i] > ranks[j] { discordant += 1 }
            }
        }
        return Double(concordant - discordant) / Double(n * (n - 1) / 2)
    }
}
