import PulseModel
import PulseStore

/// A person of a chore's rotation, or one who did it.
public struct ChorePerson: Sendable, Codable, Equatable {
    public let id: String
    public let name: String
}

/// One period's turn of a rotating chore: whose it is (nil: everyone of the rotation away).
public struct ChoreTurn: Sendable, Codable, Equatable {
    public let period: String
    public let memberID: String?
    public let member: String?
}

/// How many of a chore's tasks a person did in the current month.
public struct ChoreCount: Sendable, Codable, Equatable {
    public let memberID: String
    public let member: String
    public let done: Int
}

/// A member's days away (inclusive), which pass their turns of every rotating chore on.
public struct AwaySpan: Sendable, Codable, Equatable {
    public let id: String
    public let memberID: String
    public let member: String
    public let first: String
    public let last: String
}

/// Chores that rotate (issue 58): the rotation of a repeating task, days away, swapped turns.
/// The rule is ``RotationRules``; here are its reads and writes. Every write that can change
/// whose turn today is also hands today's task (when made and not done) to that person, in
/// the same transaction.
extension Household {
    /// How many turns ahead a template shows (today's or the next one first).
    public static let turnsShown = 4
    /// How far ahead a swap or a span away may reach.
    static let rotationHorizon = 366

    /// The rows the rule reads, besides the template's own.
    struct RotationInputs {
        var away: [RotationRules.Away]
        var swaps: [String: [RotationRules.Swap]]
    }

    func rotationInputs() throws -> RotationInputs {
        let away = try store.rows(.away, RowQuery(where: [("deleted", .bool(false))])).compactMap { row -> RotationRules.Away? in
            guard let first = IsoDate(row.text("first_day")), let last = IsoDate(row.text("last_day")) else { return nil }
            return RotationRules.Away(member: row.text("member"), first: first, last: last)
        }
        var swaps: [String: [RotationRules.Swap]] = [:]
        for row in try store.rows(.rotationSwap, RowQuery(orderedBy: ["created"])) {
            guard let first = IsoDate(row.text("first")), let second = IsoDate(row.text("second")) else { continue }
            swaps[row.text("template"), default: []].append(RotationRules.Swap(first: first, second: second))
        }
        return RotationInputs(away: away, swaps: swaps)
    }

    /// The turns of a rotating template from `from` through `through` (empty: no rotation).
    func turns(of template: RecurringTemplate, from: IsoDate, through: IsoDate, _ inputs: RotationInputs) -> [RotationRules.Turn] {
        guard let rotation = template.rotation, !rotation.isEmpty, let start = template.rotationFrom.flatMap(IsoDate.init) else { return [] }
        let all = RotationRules.turns(
            schedule: template.schedule, rotation: rotation.map(\.id), from: start, through: through, away: inputs.away,
            swaps: inputs.swaps[template.id] ?? [])
        return all.filter { $0.period >= from }
    }

    /// The assignee a rotating template's task of `date` gets (nil: none); `.none` when the
    /// template does not rotate.
    func rotationAssignee(_ template: RecurringTemplate, on date: IsoDate, _ inputs: RotationInputs) -> String?? {
        guard template.rotation?.isEmpty == false else { return .none }
        return .some(turns(of: template, from: date, through: date, inputs).first?.member)
    }

    /// The upcoming turns and this month's counts of each rotating template, for showing.
    func withRotationDetails(_ templates: [RecurringTemplate], today: IsoDate) throws -> [RecurringTemplate] {
        guard templates.contains(where: { $0.rotation?.isEmpty == false }) else { return templates }
        let inputs = try rotationInputs()
        let names = try memberNames()
        let month = String(today.description.prefix(7))
        var done: [String: [String: Int]] = [:] // template → member → count
        for row in try store.rows(.task, RowQuery(where: [("done", .bool(true)), ("deleted", .bool(false))])) {
            guard let template = row.optionalText("template"), let member = row.optionalText("assignee"),
                row.optionalText("period")?.hasPrefix(month) == true
            else { continue }
            done[template, default: [:]][member, default: 0] += 1
        }
        return templates.map { template in
            guard let rotation = template.rotation, !rotation.isEmpty else { return template }
            var shown = template
            // Far enough ahead for `turnsShown` periods of a monthly chore.
            let ahead = turns(of: template, from: today, through: Days.adding(31 * Self.turnsShown, to: today), inputs)
            shown.turns = ahead.prefix(Self.turnsShown).map { turn in
                ChoreTurn(period: turn.period.description, memberID: turn.member, member: turn.member.flatMap { names[$0] })
            }
            let counts = done[template.id] ?? [:]
            let people = rotation.map(\.id) + counts.keys.filter { id in !rotation.contains { $0.id == id } }.sorted()
            shown.doneThisMonth = people.compactMap { id in
                names[id].map { ChoreCount(memberID: id, member: $0, done: counts[id] ?? 0) }
            }
            return shown
        }
    }

    /// The writes that give today's tasks of rotating templates to whoever the rule names
    /// under `inputs` (the rows as they will be after the write that computes them).
    func redeal(_ templates: [RecurringTemplate], _ inputs: RotationInputs, today: IsoDate) throws -> [(task: String, assignee: String?)] {
        var out: [(String, String?)] = []
        for template in templates {
            guard case let .some(assignee) = rotationAssignee(template, on: today, inputs) else { continue }
            let id = "rt-\(template.id)-\(today)"
            let row = try store.row(.task, id)
            guard !row.isEmpty, row["done"]?.boolValue == false, row["deleted"]?.boolValue == false,
                row["assignee"]?.textValue != assignee
            else { continue }
            out.append((id, assignee))
        }
        return out
    }

    private func put(_ redeals: [(task: String, assignee: String?)], _ tx: inout ReplicaStore.LocalWriter) throws {
        for (task, assignee) in redeals { try tx.put(.task, task, ["assignee": assignee.map { .text($0) } ?? .null]) }
    }

    /// Member ids of `names` for a rotation: each a member, none twice, at most ``RotationRules/maxPeople``.
    func rotationIDs(_ names: [String]) throws -> [String] {
        guard names.count <= RotationRules.maxPeople else {
            throw HouseholdError.refuse(.rotationTooLong, ["count": JSONValue(names.count), "limit": JSONValue(RotationRules.maxPeople)])
        }
        var ids: [String] = []
        for name in names {
            let id = try memberID(named: name)
            guard !ids.contains(id) else { throw HouseholdError.refuse(.listedTwice, ["name": .string(name)]) }
            ids.append(id)
        }
        return ids
    }

    /// Sets who a repeating task rotates among, in turn order (`off`: it stops rotating, and
    /// goes back to the template's own assignee). A new rotation starts afresh today.
    @discardableResult
    public func setRotation(
        _ handle: String, members names: [String], off: Bool = false, today: IsoDate = Days.today()
    ) throws
        -> RecurringTemplate
    {
        guard off || !names.isEmpty else { throw HouseholdError.refuse(.rotationEmpty) }
        let ids = off ? [] : try rotationIDs(names)
        let template = try resolveRecurringTemplate(handle)
        guard !off || template.rotation != nil else { throw HouseholdError.refuse(.noRotation, ["title": .string(template.title)]) }
        var changed = template
        changed.rotation = try people(ids)
        changed.rotationFrom = today.description
        let redeals = try redeal([changed], try rotationInputs(), today: today)
        try store.write(member: memberID) { tx in
            try tx.put(
                .recurringTemplate, template.id,
                [
                    "rotation": ids.isEmpty ? .null : .text(ids.joined(separator: " ")),
                    "rotation_from": ids.isEmpty ? .null : .text(today.description),
                ])
            try put(redeals, &tx)
        }
        return try recurringTemplate(template.id, today: today)
    }

    func people(_ ids: [String]) throws -> [ChorePerson] {
        let names = try memberNames()
        return ids.compactMap { id in names[id].map { ChorePerson(id: id, name: $0) } }
    }

    /// Exchanges two turns of a rotating task: whoever the rotation gives `first` does
    /// `second`, and the other way round. Both from today on, within a year, periods of the
    /// task, and two people's.
    @discardableResult
    public func swapTurns(_ handle: String, _ firstText: String, _ secondText: String, today: IsoDate = Days.today()) throws -> RecurringTemplate {
        let first = try Validation.date(firstText, today: today)
        let second = try Validation.date(secondText, today: today)
        let template = try resolveRecurringTemplate(handle)
        guard template.rotation?.isEmpty == false else {
            throw HouseholdError.refuse(.noRotation, ["title": .string(template.title)])
        }
        for date in [first, second] {
            guard date >= today else { throw HouseholdError.refuse(.turnInThePast, ["date": .string(date.description)]) }
            guard date <= Days.adding(Self.rotationHorizon, to: today) else {
                throw HouseholdError.refuse(.turnTooFar, ["date": .string(date.description), "days": JSONValue(Self.rotationHorizon)])
            }
            guard Self.isDue(template.schedule, on: date) else {
                throw HouseholdError.refuse(.notATurn, ["date": .string(date.description), "title": .string(template.title)])
            }
        }
        var inputs = try rotationInputs()
        let before = turns(of: template, from: min(first, second), through: max(first, second), inputs)
        let a = before.first { $0.period == first }?.member
        let b = before.first { $0.period == second }?.member
        guard first != second, a != b else {
            throw HouseholdError.refuse(.samePerson, ["first": .string(first.description), "second": .string(second.description)])
        }
        inputs.swaps[template.id, default: []].append(RotationRules.Swap(first: first, second: second))
        let redeals = try redeal([template], inputs, today: today)
        try store.write(member: memberID) { tx in
            try tx.create(
                .rotationSwap, RowIDRules.newRowID(),
                [
                    "template": .text(template.id), "first": .text(first.description), "second": .text(second.description),
                    "created": .integer(try store.orderingKey()),
                ])
            try put(redeals, &tx)
        }
        return try recurringTemplate(template.id, today: today)
    }

    /// The spans away that are not over (today's and later), earliest first.
    public func awaySpans(today: IsoDate = Days.today()) throws -> [AwaySpan] {
        let names = try memberNames()
        return try store.rows(.away, RowQuery(where: [("deleted", .bool(false))], orderedBy: ["first_day"])).compactMap { row in
            guard let name = names[row.text("member")], row.text("last_day") >= today.description else { return nil }
            return AwaySpan(id: row.id, memberID: row.text("member"), member: name, first: row.text("first_day"), last: row.text("last_day"))
        }
    }

    /// Marks a member away from `first` through `last` (inclusive; from today on, at most a
    /// year): their turns of every rotating chore pass to the others meanwhile.
    @discardableResult
    public func markAway(_ name: String, from firstText: String, through lastText: String, today: IsoDate = Days.today()) throws -> AwaySpan {
        let member = try memberID(named: name)
        let first = try Validation.date(firstText, today: today)
        let last = try Validation.date(lastText, today: today)
        guard first >= today else { throw HouseholdError.refuse(.awayInThePast, ["date": .string(first.description)]) }
        guard last >= first else {
            throw HouseholdError.refuse(.awayEndsBeforeItStarts, ["first": .string(first.description), "last": .string(last.description)])
        }
        guard last <= Days.adding(Self.rotationHorizon, to: first) else {
            throw HouseholdError.refuse(.awayTooLong, ["days": JSONValue(Self.rotationHorizon)])
        }
        var inputs = try rotationInputs()
        inputs.away.append(RotationRules.Away(member: member, first: first, last: last))
        let redeals = try redeal(try recurringTemplates(), inputs, today: today)
        let id = RowIDRules.newRowID()
        try store.write(member: memberID) { tx in
            try tx.create(
                .away, id,
                ["member": .text(member), "first_day": .text(first.description), "last_day": .text(last.description), "deleted": .bool(false)])
            try put(redeals, &tx)
        }
        guard let span = try awaySpans(today: today).first(where: { $0.id == id }) else { throw HouseholdError.refuse(.notFound) }
        return span
    }

    /// A member is home again: their spans away end yesterday (those not begun are removed),
    /// so the days already away stay as they were for the rule. Returns how many were ended.
    @discardableResult
    public func endAway(_ name: String, today: IsoDate = Days.today()) throws -> Int {
        let member = try memberID(named: name)
        let spans = try awaySpans(today: today).filter { $0.memberID == member }
        guard !spans.isEmpty else { throw HouseholdError.refuse(.notAway, ["name": .string(name)]) }
        let yesterday = Days.adding(-1, to: today)
        var inputs = try rotationInputs()
        inputs.away = inputs.away.compactMap { span in
            guard span.member == member, span.last >= today else { return span }
            return span.first < today ? RotationRules.Away(member: member, first: span.first, last: yesterday) : nil
        }
        let redeals = try redeal(try recurringTemplates(), inputs, today: today)
        try store.write(member: memberID) { tx in
            for span in spans {
                let begun = span.first < today.description
                try tx.put(.away, span.id, begun ? ["last_day": .text(yesterday.description)] : ["deleted": .bool(true)])
            }
            try put(redeals, &tx)
        }
        return spans.count
    }

    func resolveRecurringTemplate(_ handle: String) throws -> RecurringTemplate {
        try Handles.resolve(
            handle, in: recurringTemplates(), what: "recurring_task", list: "recurring_tasks", name: \.title, id: \.id)
    }

    func recurringTemplate(_ id: String, today: IsoDate) throws -> RecurringTemplate {
        guard let template = try recurringTemplates(today: today).first(where: { $0.id == id }) else {
            throw HouseholdError.refuse(.notFound)
        }
        return template
    }
}

extension Household {
    static let rotationMethods: [APIMethod] = [
        .write("recurring.rotate") { a, h in
            let off = a.flag("off")
            return try h.setRotation(a.string("template"), members: off ? [] : a.strings("members"), off: off)
        },
        .write("recurring.swap") { a, h in try h.swapTurns(a.string("template"), a.string("first"), a.string("second")) },
        .read("away.list", for: APIMethod.everyone) { _, h in try h.awaySpans() },
        // Days away on phones too: a member says they are away wherever they are (issue 58).
        .write("away.add", for: APIMethod.everyone) { a, h in try h.markAway(a.string("member"), from: a.string("first"), through: a.string("last")) },
        .write("away.end", for: APIMethod.everyone) { a, h in JSONValue.object(["ended": JSONValue(try h.endAway(a.string("member")))]) },
    ]
}
