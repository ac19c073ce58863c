import FoundationEssentials
import PulseModel
import PulseStore

/// "I'm going shopping" (issue 57, item 4): a member's trip to the shops for one list, told to
/// everyone else at once, shown on that list while it lasts. A trip ends when its shopper says
/// so, when the list is done (empty after a check-off of the trip), or at its time limit.
public struct ShoppingTrip: Sendable, Codable, Equatable {
    public let id: String
    /// Who is shopping (a member's id) and their name.
    public let member: String?
    public var memberName: String?
    /// The list (nil: the first) and, for another list, its name.
    public let list: String?
    public var listName: String?
    /// The shop, when the shopper named one ("Lidl on Main Street").
    public let shop: String?
    /// When it started and when it ends by itself (hybrid clock readings, as items' `listed`:
    /// an item listed after `started` was added while the shopper was out).
    public let started: Int64
    public let until: Int64
    /// This reader's own trip.
    public var mine = false
}

/// When a trip is over: a pure rule, table-tested.
public enum ShoppingTripRules {
    /// How long a trip lasts when nobody ends it: two hours.
    public static let limitMilliseconds: Int64 = 2 * 3_600_000

    /// Over when ended, past its time limit (`now`: Unix ms), or when its list is done: empty,
    /// and something was checked off it since the trip started (a list empty when the trip
    /// starts waits for what the family adds).
    public static func isOver(ended: Bool, until: Int64, now: Int64, listEmpty: Bool, checkedSinceStart: Bool) -> Bool {
        ended || now >= HybridTimestamp(rawValue: until).milliseconds || (listEmpty && checkedSinceStart)
    }
}

extension Household {
    /// The trips going on now, on every list (oldest first), each marked `mine` for this reader's.
    public func shoppingTrips() throws -> [ShoppingTrip] {
        let now = HybridTimestamp(rawValue: try store.orderingKey()).milliseconds
        let rows = try store.rows(.shoppingTrip, RowQuery(where: [("ended", .null)], orderedBy: ["started"]))
        guard !rows.isEmpty else { return [] }
        let names = try memberNames()
        let live = Dictionary(try liveShoppingLists().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        var trips: [ShoppingTrip] = []
        for row in rows {
            let list = row.optionalText("list").flatMap { live[$0] != nil ? $0 : nil }
            let started = row.integer("started")
            let active = try shoppingItems(.active, on: list)
            let checked = try walkingEvidence(on: list).checkoffs.contains { $0.at.rawValue > started }
            let over = ShoppingTripRules.isOver(
                ended: false, until: row.integer("until"), now: now, listEmpty: active.isEmpty, checkedSinceStart: checked)
            guard !over else { continue }
            let member = row.optionalText("member")
            var trip = ShoppingTrip(
                id: row.id, member: member, memberName: member.flatMap { names[$0] }, list: list, listName: list.flatMap { live[$0] },
                shop: row.optionalText("shop"), started: started, until: row.integer("until"))
            trip.mine = member != nil && member == memberID
            trips.append(trip)
        }
        return trips
    }

    /// This reader goes shopping for `list` (nil: the first), at `shop` when named: everyone else
    /// is told. Going again while on a trip for that list answers that trip.
    @discardableResult
    public func startShoppingTrip(on list: String? = nil, shop: String? = nil) throws -> ShoppingTrip {
        let shop = try shop.flatMap { $0.trimmed.isEmpty ? nil : try Validation.name($0, what: "shop_name", max: 60) }
        // A trip is someone's: a computer or phone of nobody is asked who uses it first (else the
        // trip would be nobody's to end, and its additions marked for nobody).
        guard try currentMemberID() != nil else {
            throw HouseholdError.refuse(actingMember == nil ? .noMemberForMachine : .noMemberForPhone, ["asked": "me"])
        }
        if let going = try shoppingTrips().first(where: { $0.mine && $0.list == list }) { return going }
        let id = RowIDRules.newRowID()
        try store.write(member: memberID) { tx in
            let list = try liveInTransaction(list)
            let started = try store.orderingKey()
            let until = HybridTimestamp(milliseconds: HybridTimestamp(rawValue: started).milliseconds + ShoppingTripRules.limitMilliseconds).rawValue
            var fields: [String: FieldValue] = [
                "member": memberID.map(FieldValue.text) ?? .null, "started": .integer(started), "until": .integer(until), "ended": .null,
            ]
            if let list { fields["list"] = .text(list) }
            if let shop { fields["shop"] = .text(shop) }
            try tx.create(.shoppingTrip, id, RowFields(fields))
        }
        // Answered as the trips are read (a list done at the start is not over: nothing checked since).
        guard let trip = try shoppingTrips().first(where: { $0.id == id }) else { throw HouseholdError.refuse(.notShopping) }
        return trip
    }

    /// This reader is back: their trip for `list` ends on every computer.
    @discardableResult
    public func endShoppingTrip(on list: String? = nil) throws -> ShoppingTrip {
        guard let trip = try shoppingTrips().first(where: { $0.mine && $0.list == list }) else { throw HouseholdError.refuse(.notShopping) }
        try store.write(member: memberID) { tx in try tx.put(.shoppingTrip, trip.id, ["ended": .integer(try store.orderingKey())]) }
        return trip
    }
}

extension Household {
    static let shoppingTripMethods: [APIMethod] = [
        // The trips going on, each with `mine`.
        .read("shop.trips", for: APIMethod.everyone) { _, h in try h.shoppingTrips() },
        // `list`?, `shop`? (≤ 60 characters): everyone else is told.
        .write("shop.trip.start", for: APIMethod.everyone) { a, h in
            try h.startShoppingTrip(on: h.resolveShoppingList(a.optional("list")), shop: a.optional("shop"))
        },
        .write("shop.trip.end", for: APIMethod.everyone) { a, h in try h.endShoppingTrip(on: h.resolveShoppingList(a.optional("list"))) },
    ]
}
