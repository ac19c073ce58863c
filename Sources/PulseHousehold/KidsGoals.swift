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
    /// Whether the balance covers it.
    public let reached: Bool

    public init(id: String, reward: String, title: String, titleKey: String?, peanuts: Int, saved: Int) {
        self.id = id
        self.reward = reward
        self.title = title
        self.titleKey = titleKey
        self.peanuts = peanuts
        self.saved = saved
        reached = saved >= peanuts
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

    /// A kid picks a reward to save for (a kid's action: no PIN); it replaces a goal they had.
    @discardableResult
    public func setGoal(kid kidHandle: String, reward rewardHandle: String) throws -> KidGoal {
        let kid = try resolveKid(kidHandle)
        let reward = try resolveSelected(rewardHandle, kinds: [.reward])
        let old = kid.goal
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
        guard let goal = try resolveKid(kid.id).goal else { throw HouseholdError.io("the goal \(id) was written but cannot be read back") }
        return goal
    }

    /// The kid gives up their goal: the peanuts kept for it are free again, nothing is lost.
    @discardableResult
    public func cancelGoal(kid kidHandle: String) throws -> KidGoal {
        let kid = try resolveKid(kidHandle)
        guard let goal = kid.goal else { throw HouseholdError.refuse(.noGoal, ["kid": .string(kid.name)]) }
        let ended = try store.orderingKey()
        try store.write(member: memberID) { try $0.put(.savingsGoal, goal.id, ["ended": .integer(ended)]) }
        return goal
    }

    /// A parent redeems a reached goal in one step: the reward's spend, and the goal ended.
    @discardableResult
    public func redeemGoal(kid kidHandle: String, pin: String?) throws -> LedgerLine {
        let kid = try resolveKid(kidHandle)
        guard let goal = kid.goal else { throw HouseholdError.refuse(.noGoal, ["kid": .string(kid.name)]) }
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
