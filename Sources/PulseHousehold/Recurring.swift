import FoundationEssentials
import PulseModel
import PulseStore

public struct RecurringTemplate: Sendable, Codable, Equatable {
    public let id: String
    public let title: String
    /// `daily`, `weekly:mon,thu`, or `monthly:15` (a day past the month's end means its last day).
    public let schedule: String
    public let assigneeID: String?
    public let assignee: String?
    /// Issue 58: the people it rotates among, in turn order (nil: it does not rotate), the
    /// first day the rotation counts from, its next turns (today's first, when it has one)
    /// and, per person, how many of its tasks were done this month.
    public var rotation: [ChorePerson]? = nil
    public var rotationFrom: String? = nil
    public var turns: [ChoreTurn]? = nil
    public var doneThisMonth: [ChoreCount]? = nil
}

/// Recurring tasks: templates, and the tasks they generate, once per period for the
/// whole household. A generated task's id is derived from the template and the period
/// (`rt-<template>-<date>`), and its fields are stamped with the period's start
/// (deterministic, and earlier than any person's action): two machines generating it
/// while disconnected end with one task, and completing or deleting it wins everywhere.
extension Household {
    package static let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    public static func normalizeSchedule(_ raw: String) throws -> String {
        let text = raw.lowercased().replacing(" ", with: "")
        if text == "daily" { return text }
        if text.hasPrefix("weekly:") {
            let days = text.dropFirst(7).split(separator: ",").map(String.init)
            guard !days.isEmpty, days.allSatisfy(weekdays.contains) else {
                throw HouseholdError.refuse(.invalidWeekdays)
            }
            return "weekly:" + weekdays.filter(days.contains).joined(separator: ",")
        }
        if text.hasPrefix("monthly:"), let day = Int(text.dropFirst(8)), (1...31).contains(day) {
            return "monthly:\(day)"
        }
        throw HouseholdError.refuse(.invalidSchedule, ["text": .string(text)])
    }

    /// Whether `schedule` has a period starting on `date`.
    package static func isDue(_ schedule: String, on date: IsoDate) -> Bool {
        if schedule == "daily" { return true }
        if schedule.hasPrefix("weekly:") {
            return schedule.dropFirst(7).split(separator: ",").contains { $0 == weekdays[Days.weekday(date) - 1] }
        }
        if schedule.hasPrefix("monthly:"), let day = Int(schedule.dropFirst(8)) {
            return date.day == min(day, IsoDate.daysIn(year: date.year, month: date.month))
        }
        return false
    }

    /// The templates; `today`: with each rotating one's next turns and this month's counts.
    public func recurringTemplates(today: IsoDate? = nil) throws -> [RecurringTemplate] {
        let names = try memberNames()
        let templates = try store.rows(.recurringTemplate, RowQuery(where: [("deleted", .bool(false))], orderedBy: ["created"])).map { row in
            let name = row.optionalText("assignee").flatMap { names[$0] }
            // A removed member leaves the rotation (the rule never gives them a turn).
            let rotation = row.optionalText("rotation").map { text in
                text.split(separator: " ").compactMap { id in names[String(id)].map { ChorePerson(id: String(id), name: $0) } }
            }
            return RecurringTemplate(
                id: row.id, title: row.text("title"), schedule: row.text("schedule"),
                assigneeID: name == nil ? nil : row.optionalText("assignee"), assignee: name, rotation: rotation,
                rotationFrom: rotation == nil ? nil : row.optionalText("rotation_from"))
        }
        guard let today else { return templates }
        return try withRotationDetails(templates, today: today)
    }

    /// Adds a template; `rotation`: the members it rotates among, in turn order, from today
    /// (then `assignee` must be nil).
    @discardableResult
    public func addRecurringTemplate(
        _ title: String, schedule: String, assignee: String? = nil, rotation: [String] = [], today: IsoDate = Days.today()
    ) throws -> RecurringTemplate {
        let title = try Validation.name(title, what: "task_title", max: 200)
        let schedule = try Self.normalizeSchedule(schedule)
        guard assignee == nil || rotation.isEmpty else { throw HouseholdError.refuse(.assigneeAndRotation) }
        let assigneeID = try assignee.map { try memberID(named: $0) }
        let rotationIDs = try self.rotationIDs(rotation)
        let id = RowIDRules.newRowID()
        var fields: [String: FieldValue] = [
            "title": .text(title), "schedule": .text(schedule),
            "assignee": assigneeID.map { .text($0) } ?? .null,
            "created": .integer(try store.orderingKey()), "deleted": .bool(false),
        ]
        if !rotationIDs.isEmpty {
            fields["rotation"] = .text(rotationIDs.joined(separator: " "))
            fields["rotation_from"] = .text(today.description)
        }
        try store.write(member: memberID) { tx in try tx.create(.recurringTemplate, id, RowFields(fields)) }
        return try recurringTemplate(id, today: today)
    }

    public func removeRecurringTemplate(_ handle: String) throws -> RecurringTemplate {
        let template = try Handles.resolve(
            handle, in: recurringTemplates(), what: "recurring_task", list: "recurring_tasks",
            name: \.title, id: \.id)
        try store.write(member: memberID) { try $0.put(.recurringTemplate, template.id, ["deleted": .bool(true)]) }
        return template
    }

    /// Creates the tasks whose period starts on `date` (today by default) and that do not
    /// exist yet; returns how many. Safe to run on every machine, any number of times.
    /// Writes only when a task is missing (a read otherwise). `onlyIfIdle`: while another
    /// process holds the write lock, make nothing and return 0 at once (a listing never
    /// waits for a writer; the agent and the next listing make them).
    @discardableResult
    public func generateRecurringTasks(on date: IsoDate = Days.today(), onlyIfIdle: Bool = false) throws -> Int {
        // A rotating template's task goes to whoever the rotation names (``RotationRules``).
        let due = try recurringTemplates().filter { template in
            guard Self.isDue(template.schedule, on: date) else { return false }
            return try store.row(.task, "rt-\(template.id)-\(date)").isEmpty
        }
        guard !due.isEmpty else { return 0 }
        do {
            return try writeRecurringTasks(due, on: date, waitForWriters: !onlyIfIdle)
        } catch StoreError.busy where onlyIfIdle {
            return 0
        }
    }

    private func writeRecurringTasks(_ due: [RecurringTemplate], on date: IsoDate, waitForWriters: Bool) throws -> Int {
        let stamp = HybridTimestamp(milliseconds: Days.epochMilliseconds(date))
        let inputs = try due.contains { $0.rotation?.isEmpty == false } ? rotationInputs() : RotationInputs(away: [], swaps: [:])
        let (created, _) = try store.write(member: nil, waitForWriters: waitForWriters) { tx -> Int in
            var created = 0
            for template in due {
                let id = "rt-\(template.id)-\(date)"
                guard try store.row(.task, id).isEmpty else { continue }
                try tx.putGenerated(
                    .task, id,
                    newTaskFields(
                        template.title, assigneeID: rotationAssignee(template, on: date, inputs) ?? template.assigneeID,
                        due: date.description,
                        created: stamp.rawValue, template: template.id, period: date.description),
                    at: stamp)
                created += 1
            }
            return created
        }
        return created
    }
}

/// The rules of recurring occurrences that need no I/O.
public enum RecurringRules {
    /// The occurrences that a later one of the same template replaces: an undone task made
    /// from a template is not shown (nor counted by the focus rule) once an occurrence of a
    /// later period exists, done or not. Yesterday's undone "Water plants" leaves the list
    /// when today's is made. It is a function of the household's state alone, so every
    /// machine decides the same, and nothing is written (no race between machines, and the
    /// row is still in `export`). Completed occurrences stay, as history.
    public static func superseded(_ tasks: [HouseholdTask]) -> Set<String> {
        var latest: [String: String] = [:]
        for task in tasks {
            guard let template = task.template, let period = task.period else { continue }
            if period > latest[template] ?? "" { latest[template] = period }
        }
        var hidden = Set<String>()
        for task in tasks where !task.done {
            guard let template = task.template, let period = task.period, let newest = latest[template] else { continue }
            if period < newest { hidden.insert(task.id) }
        }
        return hidden
    }
}

extension Household {
    static let recurringMethods: [APIMethod] = [
        .read("recurring.list", for: APIMethod.everyone) { _, h in try h.recurringTemplates(today: Days.today()) },
        .write("recurring.add") { a, h in
            let rotation = a["rotation"] == nil || a["rotation"] == .null ? [] : try a.strings("rotation")
            let template = try h.addRecurringTemplate(
                a.string("title"), schedule: a.string("schedule"), assignee: a.optional("assignee"), rotation: rotation)
            return template
        },
        .write("recurring.remove") { a, h in try h.removeRecurringTemplate(a.string("template")) },
    ]
}
