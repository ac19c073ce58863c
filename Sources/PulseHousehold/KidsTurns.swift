import PulseModel
import PulseStore

/// One day's turn of a kids' chore that takes turns (nil: none of its kids is left).
public struct KidTurn: Sendable, Codable, Equatable {
    public let period: String
    public let kidID: String?
    public let kid: String?
}

/// Kids' chores that take turns (issue 58, item 1, for the kids' catalogue): a selected chore
/// can rotate among kids, one a day, so only the kid whose turn it is earns it (or reports it)
/// that day. Whose turn a day is comes from ``RotationRules`` — the same rule as the members'
/// repeating tasks, daily, with no days away — over the replicated `rotation` and
/// `rotation_from` of the chore's selection, so every computer and phone agrees. Setting it is
/// an adult's (the PIN); a removed kid leaves the rotation.
extension Household {
    /// Sets the kids a selected chore takes turns among, in turn order, from today (`off`: it no
    /// longer rotates: any kid earns it, as before).
    @discardableResult
    public func setKidsChoreRotation(
        _ handle: String, kids names: [String], off: Bool = false, pin: String?, today: IsoDate = Days.today()
    ) throws -> CatalogueItem {
        let item = try resolveSelected(handle, kinds: [.chore])
        guard off || !names.isEmpty else { throw HouseholdError.refuse(.rotationEmpty) }
        guard names.count <= RotationRules.maxPeople else {
            throw HouseholdError.refuse(.rotationTooLong, ["count": JSONValue(names.count), "limit": JSONValue(RotationRules.maxPeople)])
        }
        var ids: [String] = []
        for name in off ? [] : names {
            let kid = try resolveKid(name)
            guard !ids.contains(kid.id) else { throw HouseholdError.refuse(.listedTwice, ["name": .string(kid.name)]) }
            ids.append(kid.id)
        }
        if off, item.rotation == nil { throw HouseholdError.refuse(.noRotation, ["title": .string(item.title)]) }
        try requireAdult(pin)
        try store.write(member: memberID) { tx in
            try tx.put(
                .catalogueSelection, item.id,
                [
                    "rotation": ids.isEmpty ? .null : .text(ids.joined(separator: " ")),
                    "rotation_from": ids.isEmpty ? .null : .text(today.description),
                ])
        }
        guard let changed = try catalogue().first(where: { $0.id == item.id }) else {
            throw HouseholdError.io("the chore \(item.id) was written but cannot be read back")
        }
        return changed
    }

    /// Refuses a kid's chore on a day that is another kid's turn.
    func requireTurn(of kid: Kid, for item: CatalogueItem, today: IsoDate = Days.today()) throws {
        guard let turn = item.turns?.first, turn.period == today.description, let turnKid = turn.kidID, turnKid != kid.id else { return }
        throw HouseholdError.refuse(.notYourTurn, ["kid": .string(kid.name), "item": .string(item.title), "turn": .string(turn.kid ?? "")])
    }

    /// Today's turn and the next three of each rotating item of `items` (their rows by id).
    func addTurns(to items: inout [CatalogueItem], _ rows: [String: StoredRow], _ names: [String: String]) {
        for index in items.indices {
            guard let row = rows[items[index].id] else { continue }
            addTurns(to: &items[index], row, names)
        }
    }

    /// `names`: the kids not removed, by id.
    func addTurns(to item: inout CatalogueItem, _ row: StoredRow, _ names: [String: String], today: IsoDate = Days.today()) {
        guard item.kind == .chore, let text = row.optionalText("rotation"), let from = row.optionalText("rotation_from").flatMap(IsoDate.init)
        else { return }
        // A removed kid leaves the rotation (every replica drops the same one).
        let ids = RotationRules.distinct(text.split(separator: " ").map(String.init)).filter { names[$0] != nil }
        guard !ids.isEmpty else { return }
        item.rotation = ids.map { ChorePerson(id: $0, name: names[$0]!) }
        let end = Days.adding(Self.turnsShown - 1, to: today)
        item.turns = RotationRules.turns(schedule: "daily", rotation: ids, from: from, through: end).filter { $0.period >= today }.map {
            KidTurn(period: $0.period.description, kidID: $0.member, kid: $0.member.flatMap { names[$0] })
        }
    }

    func kidNamesByID() throws -> [String: String] {
        Dictionary(
            try store.rows(.kid, RowQuery(where: [("removed", .bool(false))])).map { ($0.id, $0.text("name")) }, uniquingKeysWith: { a, _ in a })
    }
}

extension Household {
    static let kidsTurnMethods: [APIMethod] = [
        // An adult's, with the PIN (a computer's page only: parents' mode).
        .write("kids.rotate") { a, h in
            let off = a.flag("off")
            return try h.setKidsChoreRotation(a.string("item"), kids: off ? [] : a.strings("kids"), off: off, pin: a.optional("pin"))
        }
    ]
}
