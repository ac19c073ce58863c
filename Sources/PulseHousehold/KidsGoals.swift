import PulseModel
import PulseStore

/// A kid's savings goal (issue 58, item 2): a reward of the catalogue the kid saves for.
public struct KidGoal: Sendable, Codable, Equatable {
    public let id: String
    /// The reward (its catalogue id) and its title and title's key, as when the goal was set.
    public let reward: String
    public let title: String
    public var titleKey: String? = nil
    /// What it costs (the reward's peanuts when the goal was set).
    public let peanuts: Int
    /// The peanuts kept for it: the balance, up to its cost.
    public let saved: Int
    public var reached: Bool { saved >= peanuts }

    enum CodingKeys: String, CodingKey { case id, reward, title, titleKey, peanuts, saved, reached }
    public init(id: String, reward: String, title: String, titleKey: String?, peanuts: Int, saved: Int) {
        self.id = id
        self.reward = reward
        self.title = title
        self.titleKey = titleKey
        self.peanuts = peanuts
        self.saved = saved
    }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(String.self, forKey: .id), reward: try c.decode(String.self, forKey: .reward),
            title: try c.decode(String.self, forKey: .title), titleKey: try c.decodeIfPresent(String.self, forKey: .titleKey),
            peanuts: try c.decode(Int.self, forKey: .peanuts), saved: try c.decode(Int.self, forKey: .saved))
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(reward, forKey: .reward)
        try c.encode(title, forKey: .title)
        try c.encodeIfPresent(titleKey, forKey: .titleKey)
        try c.encode(peanuts, forKey: .peanuts)
        try c.encode(saved, forKey: .saved)
        try c.encode(reached, forKey: .reached)
    }
}

/// Savings goals (decision 0022): a kid picks a reward to save for; the balance, up to the
/// reward's cost, is kept for it (other rewards can be redeemed only from what is beyond it);
/// cancelling frees it, nothing is lost; once the balance covers it, a parent redeems it in one
/// step (the reward's spend and the goal's end, one transaction). The balance itself stays the
/// ledger rule's (``Ledger/resolve(_:)``): a goal never makes it negative, whatever is merged.
extension Household {
    /// A kid's goal: the newest not ended (two set on two computers apart: the later one).
    func goal(of kid: Kid) throws -> KidGoal? {
        let rows = try store.rows(.savingsGoal, RowQuery(where: [("kid", .text(kid.id)), ("ended", .null)], orderedBy: ["created"]))
        guard let row = rows.last else { return nil }
        let peanuts = Int(row.integer("peanuts"))
        let reward = row.text("reward")
        return KidGoal(
            id: row.id, reward: reward, title: row.text("title"), titleKey: Catalogue.titleKey(id: reward, title: row.text("title")),
            peanuts: peanuts, saved: min(max(kid.balance, 0), peanuts))
    }

    /// The peanuts a kid may spend on anything but their goal.
    func spendable(_ kid: Kid) throws -> Int {
        kid.balance - (try goal(of: kid)?.saved ?? 0)
    }

    /// A kid picks a reward to save for (a kid's action: no PIN); it replaces a goal they had.
    @discardableResult
    public func setGoal(kid kidHandle: String, reward rewardHandle: String) throws -> KidGoal {
        let kid = try resolveKid(kidHandle)
        let reward = try resolveSelected(rewardHandle, kinds: [.reward])
        let old = try goal(of: kid)
        if old?.reward == reward.id { throw HouseholdError.refuse(.alreadyTheGoal, ["kid": .string(kid.name), "reward": .string(reward.title)]) }
        let id = RowIDRules.newRowID()
        let created = try store.orderingKey()
        try store.write(member: memberID) { tx in
            if let old { try tx.put(.savingsGoal, old.id, ["ended": .integer(created)]) }
            try tx.create(
                .savingsGoal, id,
                [
                    "kid": .text(kid.id), "reward": .text(reward.id), "title": .text(reward.title),
                    "peanuts": .integer(Int64(reward.peanuts)), "created": .integer(created), "ended": .null, "redeemed": .null,
                ])
        }
        guard let goal = try goal(of: resolveKid(kid.id)) else { throw HouseholdError.io("the goal \(id) was written but cannot be read back") }
        return goal
    }

    /// The kid gives up their goal: the peanuts kept for it are free again, nothing is lost.
    @discardableResult
    public func cancelGoal(kid kidHandle: String) throws -> KidGoal {
        let kid = try resolveKid(kidHandle)
        guard let goal = try goal(of: kid) else { throw HouseholdError.refuse(.noGoal, ["kid": .string(kid.name)]) }
        let ended = try store.orderingKey()
        try store.write(member: memberID) { try $0.put(.savingsGoal, goal.id, ["ended": .integer(ended)]) }
        return goal
    }

    /// A parent redeems a reached goal in one step: the reward's spend, and the goal ended.
    @discardableResult
    public func redeemGoal(kid kidHandle: String, pin: String?) throws -> LedgerLine {
        let kid = try resolveKid(kidHandle)
        guard let goal = try goal(of: kid) else { throw HouseholdError.refuse(.noGoal, ["kid": .string(kid.name)]) }
        guard goal.reached else {
            throw HouseholdError.refuse(
                .goalNotReached, ["kid": .string(kid.name), "reward": .string(goal.title), "saved": JSONValue(goal.saved), "cost": JSONValue(goal.peanuts)])
        }
        try requireAdult(pin)
        let id = RowIDRules.newRowID()
        let created = try store.orderingKey()
        try store.write(member: memberID) { tx in
            try tx.create(
                .ledgerEntry, id,
                [
                    "kid": .text(kid.id), "kind": .text(Ledger.Entry.Kind.spend.rawValue), "peanuts": .integer(Int64(goal.peanuts)),
                    "selection": .text(goal.reward), "title": .text(goal.title), "created": .integer(created), "hidden": .bool(false),
                ])
            try tx.put(.savingsGoal, goal.id, ["ended": .integer(created), "redeemed": .text(id)])
        }
        return try line(id, of: kid)
    }
}

extension Household {
    static let goalMethods: [APIMethod] = [
        .write("kids.goal.set", for: APIMethod.everyone) { a, h in try h.setGoal(kid: a.string("kid"), reward: a.string("reward")) },
        .write("kids.goal.cancel", for: APIMethod.everyone) { a, h in try h.cancelGoal(kid: a.string("kid")) },
        .write("kids.goal.redeem") { a, h in try h.redeemGoal(kid: a.string("kid"), pin: a.optional("pin")) },
    ]
}
