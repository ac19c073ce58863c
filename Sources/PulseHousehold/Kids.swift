import FoundationEssentials
import PulseModel
import PulseStore

public struct Kid: Sendable, Codable, Equatable {
    public let id: String
    public let name: String
    /// Derived from the ledger (``Ledger/resolve(_:)``), never stored.
    public let balance: Int
    /// What the kid saves for, with the peanuts kept for it (issue 58), nil: no goal.
    public var goal: KidGoal? = nil
}

/// One entry of a kid's ledger, with what the ledger rule made of it.
public struct LedgerLine: Sendable, Codable, Equatable {
    public let id: String
    public let kid: String
    /// `earn` or `spend`.
    public let kind: String
    public let peanuts: Int
    /// The catalogue item, nil for an adult's adjustment.
    public let item: String?
    public let title: String
    /// `catalogue.<id>` while the title is the built-in one (``CatalogueItem/titleKey``).
    public var titleKey: String? = nil
    /// An adjustment's reason (nil for an earn or a spend of a catalogue item).
    public var reason: String? = nil
    /// The ordering stamp (hybrid timestamp) and the day an earn was marked.
    public let created: Int64
    /// When the entry was made, Unix milliseconds (the stamp's clock part: spends and
    /// adjustments have no `day`, and a page shows them a date all the same).
    public var time: Int64? = nil
    public let day: String?
    /// `counted`, `declined-overspend` (a redemption the balance did not cover once every
    /// machine's entries were merged: nothing was taken) or `declined-repeat` (already paid
    /// for that item that day, on another machine).
    public let outcome: String
    /// Removed from the basket by the kid (no refund).
    public let hidden: Bool
    /// The balance after this entry.
    public let balanceAfter: Int
    /// Who made it (the member of the machine that wrote it), nil when unknown or removed.
    public var by: String? = nil
    /// The computer it was made on (its replica's label): an adult's entry after the PIN was
    /// reset says where it came from, whoever the computer belongs to.
    public var machine: String? = nil
    /// A bonus (issue 58): the entry of the chore or rule done it rewards, with that entry's
    /// title and its title's key (each reader says "Bonus for …" in their words).
    public var bonusFor: String? = nil
    public var bonusTitle: String? = nil
    public var bonusTitleKey: String? = nil
}

/// The kids' ledger (Mindful Home): kids, the catalogue selection, peanuts earned and
/// spent. Kid actions (done, redeem, basket) need no PIN; adult actions do (KidsPIN.swift).
extension Household {
    // MARK: Reads

    public func kids() throws -> [Kid] {
        try store.rows(.kid, RowQuery(where: [("removed", .bool(false))], orderedBy: ["name"])).map { row in
            var kid = Kid(id: row.id, name: row.text("name"), balance: try ledgerLines(kid: row.id).last?.balanceAfter ?? 0)
            kid.goal = try goal(of: kid)
            return kid
        }
    }

    /// The catalogue (built-in or `HOME/catalogue.json`) with this household's selection,
    /// and the family's own items. A selected item shows the title and peanuts it was
    /// selected with (replicated), whatever this machine's catalogue file says.
    public func catalogue() throws -> [CatalogueItem] {
        let catalogue = try Catalogue.load(home: home)
        let rows = Dictionary(uniqueKeysWithValues: try store.rows(.catalogueSelection, RowQuery(orderedBy: ["title"])).map { ($0.id, $0) })
        var items = catalogue.items.map { item -> CatalogueItem in
            guard let row = rows[item.id], row.bool("selected") else { return item }
            return CatalogueItem(
                id: item.id, kind: item.kind, category: row.text("category"), title: row.text("title"),
                peanuts: Int(row.integer("peanuts")), selected: true, own: false)
        }
        // The kids' names once, and only when a chore takes turns among them.
        let kidNames = try rows.values.contains { $0.optionalText("rotation") != nil } ? kidNamesByID() : [:]
        addTurns(to: &items, rows, kidNames)
        let builtIn = Set(items.map(\.id))
        for row in rows.values.sorted(by: { $0.text("title") < $1.text("title") }) where !builtIn.contains(row.id) {
            guard let kind = CatalogueItem.Kind(rawValue: row.text("kind")) else { continue }
            // A selected item of another machine's catalogue file counts as the family's own.
            guard row.bool("selected") || row.id.hasPrefix("own-") else { continue }
            var own = CatalogueItem(
                id: row.id, kind: kind, category: row.text("category"), title: row.text("title"),
                peanuts: Int(row.integer("peanuts")), selected: row.bool("selected"), own: true)
            addTurns(to: &own, row, kidNames)
            items.append(own)
        }
        for index in items.indices where !items[index].own {
            items[index].titleKey = Catalogue.titleKey(id: items[index].id, title: items[index].title)
        }
        let kindOrder: [CatalogueItem.Kind: Int] = [.rule: 0, .chore: 1, .reward: 2]
        let categoryOrder = ["security": 0, "respect": 1, "fun": 2]
        return items.enumerated().sorted { l, r in
            (kindOrder[l.element.kind]!, categoryOrder[l.element.category] ?? 3, l.offset)
                < (kindOrder[r.element.kind]!, categoryOrder[r.element.category] ?? 3, r.offset)
        }.map(\.element)
    }

    /// What the kids see: the selected items.
    public func selectedItems(_ kind: CatalogueItem.Kind? = nil) throws -> [CatalogueItem] {
        try catalogue().filter { $0.selected && (kind == nil || $0.kind == kind) }
    }

    /// A kid's entries in the order the ledger rule takes them, with their outcomes.
    public func ledger(kid handle: String) throws -> [LedgerLine] {
        try ledgerLines(kid: resolveKid(handle).id)
    }

    /// A kid's basket: the rewards redeemed and not declined, not removed, newest first.
    public func basket(kid handle: String) throws -> [LedgerLine] {
        try ledger(kid: handle).filter { $0.kind == "spend" && $0.item != nil && $0.outcome == "counted" && !$0.hidden }.reversed()
    }

    /// Entries the ledger rule declined, for every kid (shown in `conflicts`).
    public func declinedLedgerEntries() throws -> [LedgerLine] {
        try store.rows(.kid, RowQuery(where: [("removed", .bool(false))], orderedBy: ["name"]))
            .flatMap { try ledgerLines(kid: $0.id) }.filter { $0.outcome != "counted" }
    }

    // MARK: Kid actions (no PIN)

    /// The rules and chores that earned `kid` peanuts on `today` (each earns once a day).
    public func itemsDoneToday(kid: Kid, today: IsoDate = Days.today()) throws -> Set<String> {
        let day = today.description
        return Set(try ledgerLines(kid: kid.id).filter { $0.day == day && $0.outcome == "counted" && $0.kind == "earn" }.compactMap(\.item))
    }

    /// A kid kept a rule or did a chore today: peanuts earned, once per kid, item and day.
    @discardableResult
    public func markDone(kid kidHandle: String, item itemHandle: String, today: IsoDate = Days.today()) throws -> LedgerLine {
        let kid = try resolveKid(kidHandle)
        let item = try resolveSelected(itemHandle, kinds: [.rule, .chore])
        let day = today.description
        try requireTurn(of: kid, for: item)
        // A chore a parent approves is reported (``reportChore(kid:item:today:)``), never earned at a tap.
        if try needsApproval(item, approval: kidsApproval()) {
            throw HouseholdError.refuse(.needsApproval, ["kid": .string(kid.name), "item": .string(item.title)])
        }
        if try itemsDoneToday(kid: kid, today: today).contains(item.id) {
            throw HouseholdError.refuse(.alreadyEarnedToday, ["kid": .string(kid.name), "item": .string(item.title), "peanuts": JSONValue(item.peanuts)])
        }
        let id = Ledger.earnID(day: day, random: RowIDRules.newRowID())
        try writeEntry(id, kid: kid, kind: .earn, peanuts: item.peanuts, item: item.id, title: item.title)
        return try line(id, of: kid)
    }

    /// A kid spends peanuts on a selected reward; refused when the balance does not cover it.
    @discardableResult
    public func redeem(kid kidHandle: String, reward rewardHandle: String) throws -> LedgerLine {
        let kid = try resolveKid(kidHandle)
        let reward = try resolveSelected(rewardHandle, kinds: [.reward])
        guard kid.balance >= reward.peanuts else {
            throw HouseholdError.refuse(
                .notEnoughPeanuts,
                ["kid": .string(kid.name), "balance": JSONValue(kid.balance), "reward": .string(reward.title), "cost": JSONValue(reward.peanuts)])
        }
        // The peanuts kept for a goal go to nothing else; the goal's own reward ends the goal.
        let goal = kid.goal
        if let goal, goal.reward != reward.id, kid.balance - goal.saved < reward.peanuts {
            throw HouseholdError.refuse(
                .keptForGoal,
                [
                    "kid": .string(kid.name), "free": JSONValue(kid.balance - goal.saved), "reward": .string(reward.title),
                    "cost": JSONValue(reward.peanuts), "goal": .string(goal.title),
                ])
        }
        let id = RowIDRules.newRowID()
        try writeEntry(
            id, kid: kid, kind: .spend, peanuts: reward.peanuts, item: reward.id, title: reward.title,
            endingGoal: goal?.reward == reward.id ? goal?.id : nil)
        return try line(id, of: kid)
    }

    /// Removes a reward from the kid's basket (hidden, no refund).
    @discardableResult
    public func removeFromBasket(kid kidHandle: String, entry handle: String) throws -> LedgerLine {
        let basket = try basket(kid: kidHandle)
        let entry = try Handles.resolve(handle, in: basket, what: "reward", list: "basket", name: \.title, id: \.id)
        try store.write(member: memberID) { try $0.put(.ledgerEntry, entry.id, ["hidden": .bool(true)]) }
        return entry
    }

    // MARK: Adult actions (PIN)

    @discardableResult
    public func addKid(_ name: String, pin: String?) throws -> Kid {
        let clean = try Validation.name(name, what: "kid_name", max: 60)
        guard try !kids().contains(where: { $0.name.lowercased() == clean.lowercased() }) else {
            throw HouseholdError.refuse(.duplicate, ["kind": "kid", "name": .string(clean)])
        }
        try requireAdult(pin)
        let id = RowIDRules.newRowID()
        try store.write(member: memberID) { try $0.create(.kid, id, ["name": .text(clean), "removed": .bool(false)]) }
        return Kid(id: id, name: clean, balance: 0)
    }

    @discardableResult
    public func renameKid(_ handle: String, to name: String, pin: String?) throws -> Kid {
        let kid = try resolveKid(handle)
        let clean = try Validation.name(name, what: "kid_name", max: 60)
        try requireAdult(pin)
        try store.write(member: memberID) { try $0.put(.kid, kid.id, ["name": .text(clean)]) }
        return Kid(id: kid.id, name: clean, balance: kid.balance)
    }

    /// Removes a kid from the lists; their ledger is kept (a removal is a tombstone).
    @discardableResult
    public func removeKid(_ handle: String, pin: String?) throws -> Kid {
        let kid = try resolveKid(handle)
        try requireAdult(pin)
        try store.write(member: memberID) { try $0.put(.kid, kid.id, ["removed": .bool(true)]) }
        return kid
    }

    /// Selects catalogue items (or own items deselected earlier): the kids see them.
    @discardableResult
    public func selectCatalogueItems(_ handles: [String], pin: String?) throws -> [CatalogueItem] {
        try setSelected(handles, true, pin: pin)
    }

    @discardableResult
    public func deselectCatalogueItems(_ handles: [String], pin: String?) throws -> [CatalogueItem] {
        try setSelected(handles, false, pin: pin)
    }

    /// Adds the family's own rule, chore or reward (selected at once).
    @discardableResult
    public func addOwnCatalogueItem(kind: String, title: String, peanuts: Int, category: String, pin: String?) throws -> CatalogueItem {
        guard let kind = CatalogueItem.Kind(rawValue: kind.lowercased()) else {
            throw HouseholdError.refuse(.unknownKind, ["value": .string(kind), "known": ["rule", "chore", "reward"]])
        }
        let clean = try Validation.name(title, what: "title", max: 200)
        guard Catalogue.peanutRange.contains(peanuts) else {
            throw HouseholdError.refuse(
                .peanutsOutOfRange,
                ["value": JSONValue(peanuts), "min": JSONValue(Catalogue.peanutRange.lowerBound), "max": JSONValue(Catalogue.peanutRange.upperBound)])
        }
        guard Catalogue.categories[category.lowercased()] != nil else {
            throw HouseholdError.refuse(.unknownCategory, ["value": .string(category), "known": ["security", "respect", "fun"]])
        }
        try requireAdult(pin)
        let item = CatalogueItem(
            id: "own-" + RowIDRules.newRowID(), kind: kind, category: category.lowercased(), title: clean,
            peanuts: peanuts, selected: true, own: true)
        try store.write(member: memberID) { try $0.create(.catalogueSelection, item.id, selectionFields(item)) }
        return item
    }

    /// An adult's correction: `peanuts` > 0 adds, < 0 takes away (never below zero: a
    /// take-away the balance does not cover is declined like an overspend).
    @discardableResult
    public func adjustKid(_ handle: String, peanuts: Int, reason: String, pin: String?) throws -> LedgerLine {
        let kid = try resolveKid(handle)
        guard peanuts != 0, abs(peanuts) <= 1000 else { throw HouseholdError.refuse(.adjustmentOutOfRange, ["value": JSONValue(peanuts), "max": 1000]) }
        let why = try Validation.name(reason, what: "reason", max: 180)
        if peanuts < 0 && kid.balance < -peanuts {
            throw HouseholdError.refuse(.cannotTake, ["kid": .string(kid.name), "balance": JSONValue(kid.balance), "peanuts": JSONValue(-peanuts)])
        }
        try requireAdult(pin)
        let id = RowIDRules.newRowID()
        try writeEntry(id, kid: kid, kind: peanuts > 0 ? .earn : .spend, peanuts: abs(peanuts), item: nil, title: Self.adjustmentPrefix + why)
        return try line(id, of: kid)
    }

    /// The bonuses an adult gives at once: 1 to this many peanuts.
    public static let bonusRange = 1...100

    /// An adult's bonus for a chore or rule a kid did (`done`: the earn's entry id, or the item,
    /// meaning the kid's latest counted earn of it): `peanuts` more, recorded with the adult and
    /// the entry it rewards. Once per entry.
    @discardableResult
    public func giveBonus(kid kidHandle: String, for done: String, peanuts: Int, pin: String?) throws -> LedgerLine {
        let kid = try resolveKid(kidHandle)
        guard Self.bonusRange.contains(peanuts) else {
            throw HouseholdError.refuse(
                .bonusOutOfRange, ["value": JSONValue(peanuts), "min": JSONValue(Self.bonusRange.lowerBound), "max": JSONValue(Self.bonusRange.upperBound)])
        }
        let lines = try ledgerLines(kid: kid.id)
        let earned = lines.filter { $0.kind == "earn" && $0.item != nil && $0.outcome == "counted" }
        var found = earned.first { $0.id == done }
        if found == nil {
            let item = try resolveSelected(done, kinds: [.rule, .chore])
            found = earned.last { $0.item == item.id }
            if found == nil { throw HouseholdError.refuse(.notEarned, ["kid": .string(kid.name), "item": .string(item.title)]) }
        }
        let entry = found!
        guard !lines.contains(where: { $0.bonusFor == entry.id }) else {
            throw HouseholdError.refuse(.alreadyRewarded, ["kid": .string(kid.name), "item": .string(entry.title)])
        }
        try requireAdult(pin)
        let id = RowIDRules.newRowID()
        try writeEntry(id, kid: kid, kind: .earn, peanuts: peanuts, item: nil, title: Self.bonusPrefix + entry.title, bonusFor: entry.id)
        return try line(id, of: kid)
    }

    // MARK: Helpers

    /// A bonus's stored title is "Bonus: " and the title of what it rewards (what a release
    /// before bonuses shows, as an adjustment's reason).
    static let bonusPrefix = "Bonus: "

    /// An adjustment's stored title is "Adjustment: " and the reason (data every version
    /// reads; each reader renders ``LedgerLine/reason`` in their words).
    static let adjustmentPrefix = "Adjustment: "

    public func resolveKid(_ handle: String) throws -> Kid {
        try Handles.resolve(handle, in: kids(), what: "kid", list: "kids", name: \.name, id: \.id)
    }

    func resolveSelected(_ handle: String, kinds: Set<CatalogueItem.Kind>) throws -> CatalogueItem {
        let items = try selectedItems().filter { kinds.contains($0.kind) }
        let (what, list) =
            kinds == [.reward] ? ("reward", "selected_rewards") : kinds == [.chore] ? ("chore", "selected_chores") : ("rule_or_chore", "selected_rules")
        return try Handles.resolve(handle, in: items, what: what, list: list, name: \.title, id: \.id)
    }

    private func setSelected(_ handles: [String], _ selected: Bool, pin: String?) throws -> [CatalogueItem] {
        guard !handles.isEmpty else { throw HouseholdError.refuse(.noItemsNamed) }
        let all = try catalogue()
        var chosen: [CatalogueItem] = []
        for handle in handles {
            let item = try Handles.resolve(handle, in: all, what: "catalogue_item", list: "catalogue", name: \.title, id: \.id)
            guard item.selected != selected else {
                throw HouseholdError.refuse(selected ? .alreadySelected : .notSelected, ["title": .string(item.title)])
            }
            if !chosen.contains(where: { $0.id == item.id }) { chosen.append(item) }
        }
        try requireAdult(pin)
        try store.write(member: memberID) { tx in
            for var item in chosen {
                item.selected = selected
                if try store.row(.catalogueSelection, item.id).isEmpty {
                    try tx.create(.catalogueSelection, item.id, selectionFields(item))
                } else {
                    try tx.put(.catalogueSelection, item.id, ["selected": .bool(selected)])
                }
            }
        }
        return chosen.map {
            var item = $0; item.selected = selected; return item
        }
    }

    private func selectionFields(_ item: CatalogueItem) -> RowFields {
        [
            "kind": .text(item.kind.rawValue), "title": .text(item.title), "peanuts": .integer(Int64(item.peanuts)),
            "category": .text(item.category), "selected": .bool(item.selected),
        ]
    }

    private func writeEntry(
        _ id: String, kid: Kid, kind: Ledger.Entry.Kind, peanuts: Int, item: String?, title: String, bonusFor: String? = nil,
        endingGoal goal: String? = nil
    ) throws {
        let created = try store.orderingKey()
        var fields: [String: FieldValue] = [
            "kid": .text(kid.id), "kind": .text(kind.rawValue), "peanuts": .integer(Int64(peanuts)),
            "selection": item.map { .text($0) } ?? .null, "title": .text(title), "created": .integer(created),
            "hidden": .bool(false),
        ]
        if let bonusFor { fields["bonus_for"] = .text(bonusFor) }
        try store.write(member: memberID) { tx in
            try tx.create(.ledgerEntry, id, RowFields(fields))
            if let goal { try tx.put(.savingsGoal, goal, ["ended": .integer(created), "redeemed": .text(id)]) }
        }
    }

    func line(_ id: String, of kid: Kid) throws -> LedgerLine {
        guard let line = try ledgerLines(kid: kid.id).first(where: { $0.id == id }) else {
            throw HouseholdError.io("the ledger entry \(id) was written but cannot be read back")
        }
        return line
    }

    private struct StoredEntry {
        let entry: Ledger.Entry
        let title: String
        let hidden: Bool
        let bonusFor: String?
    }

    private func ledgerEntries(kid: String) throws -> [StoredEntry] {
        try store.rows(.ledgerEntry, RowQuery(where: [("kid", .text(kid))], orderedBy: ["created"])).compactMap { row in
            guard let kind = Ledger.Entry.Kind(rawValue: row.text("kind")) else { return nil }
            let item = row.optionalText("selection")
            return StoredEntry(
                entry: Ledger.Entry(
                    id: row.id, kind: kind, peanuts: Int(row.integer("peanuts")), item: item,
                    day: kind == .earn && item != nil ? Ledger.day(fromID: row.id) : nil,
                    created: row.integer("created")),
                title: row.text("title"), hidden: row.bool("hidden"), bonusFor: row.optionalText("bonus_for"))
        }
    }

    func ledgerLines(kid: String) throws -> [LedgerLine] {
        let stored = try ledgerEntries(kid: kid)
        let byID = Dictionary(uniqueKeysWithValues: stored.map { ($0.entry.id, $0) })
        let resolution = Ledger.resolve(stored.map(\.entry))
        var balance = 0
        let names = try memberNames()
        let labels = try replicaLabels()
        let kidField = EntityKind.ledgerEntry.schema.number(of: "kid")
        return try resolution.order.compactMap { id -> LedgerLine? in
            guard let s = byID[id] else { return nil }
            let outcome = resolution.outcomes[id] ?? .counted
            if outcome == .counted { balance += s.entry.kind == .earn ? s.entry.peanuts : -s.entry.peanuts }
            var line = LedgerLine(
                id: id, kid: kid, kind: s.entry.kind.rawValue, peanuts: s.entry.peanuts, item: s.entry.item,
                title: s.title, created: s.entry.created, day: s.entry.day, outcome: outcome.rawValue,
                hidden: s.hidden, balanceAfter: balance)
            line.titleKey = Catalogue.titleKey(id: s.entry.item, title: s.title)
            line.time = HybridTimestamp(rawValue: s.entry.created).milliseconds
            // The writer of its first field (set once, when it was made).
            if let kidField, let version = try store.versions(.ledgerEntry, id)[kidField] {
                line.by = version.member.flatMap { names[$0] }
                line.machine = labels[version.stamp.origin]
            }
            if let rewarded = s.bonusFor.flatMap({ byID[$0] }) {
                line.bonusFor = rewarded.entry.id
                line.bonusTitle = rewarded.title
                line.bonusTitleKey = Catalogue.titleKey(id: rewarded.entry.item, title: rewarded.title)
            } else if s.entry.item == nil {
                line.reason = s.title.hasPrefix(Self.adjustmentPrefix) ? String(s.title.dropFirst(Self.adjustmentPrefix.count)) : s.title
            }
            return line
        }
    }
}

extension Household {
    static let kidsMethods: [APIMethod] = [
        .read("kids.list", for: APIMethod.everyone) { _, h in try h.kids() },
        .read("kids.catalogue.list", for: APIMethod.everyone) { a, h in
            // With a kid: each rule and chore says whether it earned that kid peanuts today.
            guard let handle = try a.optional("kid") else { return try JSONValue.from(h.catalogue()) }
            // A chore that waits for a parent says so (`approval`), and whether today's report waits (`waiting`).
            let kid = try h.resolveKid(handle)
            let done = try h.itemsDoneToday(kid: kid)
            let approval = try h.kidsApproval()
            let today = Days.today().description
            let waiting = Set(try h.choreReports(kid: kid).filter { $0.status == .waiting && $0.day == today }.map(\.item))
            return JSONValue.array(
                try h.catalogue().map { item in
                    guard case var .object(fields) = try JSONValue.from(item) else { return try .from(item) }
                    if item.kind != .reward { fields["doneToday"] = .bool(done.contains(item.id)) }
                    // A chore taking turns among kids: whether today is this kid's.
                    if let turn = item.turns?.first, turn.period == today { fields["yourTurn"] = .bool(turn.kidID == kid.id) }
                    if h.needsApproval(item, approval: approval) {
                        fields["approval"] = .bool(true)
                        fields["waiting"] = .bool(waiting.contains(item.id))
                    }
                    return .object(fields)
                })
        },
        .read("kids.history.list", for: APIMethod.everyone) { a, h in try h.ledger(kid: a.string("kid")) },
        .read("kids.basket.list", for: APIMethod.everyone) { a, h in try h.basket(kid: a.string("kid")) },
        .write("kids.done", for: APIMethod.everyone) { a, h in try h.markDone(kid: a.string("kid"), item: a.string("item")) },
        .write("kids.redeem", for: APIMethod.everyone) { a, h in try h.redeem(kid: a.string("kid"), reward: a.string("reward")) },
        .write("kids.basket.remove", for: APIMethod.everyone) { a, h in try h.removeFromBasket(kid: a.string("kid"), entry: a.string("entry")) },
        // An adult's, with the PIN (a computer's page only: parents' mode).
        .write("kids.add") { a, h in try h.addKid(a.string("name"), pin: a.optional("pin")) },
        .write("kids.rename") { a, h in try h.renameKid(a.string("kid"), to: a.string("name"), pin: a.optional("pin")) },
        .write("kids.remove") { a, h in try h.removeKid(a.string("kid"), pin: a.optional("pin")) },
        .write("kids.select") { a, h in try h.selectCatalogueItems(a.strings("items"), pin: a.optional("pin")) },
        .write("kids.deselect") { a, h in try h.deselectCatalogueItems(a.strings("items"), pin: a.optional("pin")) },
        .write("kids.own") { a, h in
            try h.addOwnCatalogueItem(
                kind: a.string("kind"), title: a.string("title"), peanuts: a.integer("peanuts"), category: a.string("category"),
                pin: a.optional("pin"))
        },
        .write("kids.bonus") { a, h in
            try h.giveBonus(kid: a.string("kid"), for: a.string("entry"), peanuts: a.integer("peanuts"), pin: a.optional("pin"))
        },
        .write("kids.adjust") { a, h in
            try h.adjustKid(a.string("kid"), peanuts: a.integer("peanuts"), reason: a.string("reason"), pin: a.optional("pin"))
        },
    ]
}
