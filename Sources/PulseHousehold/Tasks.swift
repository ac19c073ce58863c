import FoundationEssentials
import PulseModel
import PulseStore

public struct HouseholdTask: Sendable, Codable, Equatable {
    public let id: String
    public let title: String
    public let done: Bool
    /// The assignee's member id and name; nil when unassigned or the member was removed.
    public let assigneeID: String?
    public let assignee: String?
    public let due: String?
    public let created: Int64
    public let template: String?
    public let period: String?

    public init(
        id: String, title: String, done: Bool, assigneeID: String?, assignee: String?, due: String?, created: Int64,
        template: String?, period: String?
    ) {
        self.id = id
        self.title = title
        self.done = done
        self.assigneeID = assigneeID
        self.assignee = assignee
        self.due = due
        self.created = created
        self.template = template
        self.period = period
    }
}

/// The daily tasks: at most three active at once (the focus rule).
extension Household {
    public static let focusLimit = 3

    /// Active tasks first (oldest first), then completed ones. `mine`: only the tasks
    /// assigned to this machine's member (the seed's "Assigned to Me").
    /// An undone occurrence of a recurring task is not listed once a later occurrence of
    /// the same template exists (``RecurringRules/superseded(_:)``).
    public func tasks(mine: Bool = false) throws -> [HouseholdTask] {
        let names = try memberNames()
        let all = try store.rows(.task, RowQuery(where: [("deleted", .bool(false))], orderedBy: ["done", "created"])).map { row in
            // An assignee who was removed (or has not arrived yet) shows as unassigned.
            let name = row.optionalText("assignee").flatMap { names[$0] }
            return HouseholdTask(
                id: row.id, title: row.text("title"), done: row.bool("done"),
                assigneeID: name == nil ? nil : row.optionalText("assignee"), assignee: name,
                due: row.optionalText("due"), created: row.integer("created"),
                template: row.optionalText("template"), period: row.optionalText("period"))
        }
        let hidden = RecurringRules.superseded(all)
        var visible = hidden.isEmpty ? all : all.filter { !hidden.contains($0.id) }
        if mine {
            guard let me = try currentMemberID() else {
                throw HouseholdError.refuse(actingMember == nil ? .noMemberForMachine : .noMemberForPhone, ["asked": "mine"])
            }
            visible = visible.filter { $0.assigneeID == me }
        }
        return visible
    }

    public func activeTaskCount() throws -> Int { try tasks().filter { !$0.done }.count }

    private func focusCheck(adding count: Int, force: Bool) throws {
        let active = try tasks().filter { !$0.done }
        guard force || active.count + count <= Self.focusLimit else {
            throw HouseholdError.refuse(
                .focusRule,
                [
                    "limit": JSONValue(Self.focusLimit), "active": JSONValue(active.count),
                    "titles": JSONValue(active.map(\.title)),
                ])
        }
    }

    @discardableResult
    public func addTask(_ title: String, assignee: String? = nil, due: String? = nil, force: Bool = false) throws -> HouseholdTask {
        let title = try Validation.name(title, what: "task_title", max: 200)
        let assigneeID = try assignee.map { try memberID(named: $0) }
        let dueDate = try due.map { try Validation.date($0).description }
        try focusCheck(adding: 1, force: force)
        let id = RowIDRules.newRowID()
        try store.write(member: memberID) { tx in
            try tx.create(.task, id, newTaskFields(title, assigneeID: assigneeID, due: dueDate, created: try store.orderingKey()))
        }
        return try task(id)
    }

    package func newTaskFields(
        _ title: String, assigneeID: String?, due: String?, created: Int64,
        template: String? = nil, period: String? = nil
    ) -> RowFields {
        [
            "title": .text(title), "done": .bool(false), "assignee": assigneeID.map { .text($0) } ?? .null,
            "due": due.map { .text($0) } ?? .null, "created": .integer(created),
            "template": template.map { .text($0) } ?? .null, "period": period.map { .text($0) } ?? .null, "deleted": .bool(false),
        ]
    }

    package func task(_ id: String) throws -> HouseholdTask {
        guard let task = try tasks().first(where: { $0.id == id }) else {
            throw HouseholdError.refuse(.taskDeleted)
        }
        return task
    }

    /// A task by its position in `tasks()` (active first), title, or the start or end of its id.
    public func resolveTask(_ handle: String) throws -> HouseholdTask {
        try Handles.resolve(handle, in: tasks(), what: "task", list: "task_list", name: \.title, id: \.id)
    }

    public func completeTask(_ handle: String) throws -> HouseholdTask {
        let task = try resolveTask(handle)
        guard !task.done else { throw HouseholdError.refuse(.alreadyDone, ["title": .string(task.title)]) }
        try store.write(member: memberID) { try $0.put(.task, task.id, ["done": .bool(true)]) }
        return try self.task(task.id)
    }

    public func reopenTask(_ handle: String, force: Bool = false) throws -> HouseholdTask {
        let task = try resolveTask(handle)
        guard task.done else { throw HouseholdError.refuse(.notDone, ["title": .string(task.title)]) }
        try focusCheck(adding: 1, force: force)
        try store.write(member: memberID) { try $0.put(.task, task.id, ["done": .bool(false)]) }
        return try self.task(task.id)
    }

    /// What `editTask` changes: each field nil = unchanged. `assignee`/`due` `.some(nil)`
    /// clears them.
    public struct TaskEdit: Sendable, Equatable {
        public var title: String?
        public var assignee: String??
        public var due: String??
        public init(title: String? = nil, assignee: String?? = nil, due: String?? = nil) {
            self.title = title
            self.assignee = assignee
            self.due = due
        }
        public var isEmpty: Bool { title == nil && assignee == nil && due == nil }
    }

    /// Edits a task's title, assignee (a member, `me`, or none) and due date (or none).
    /// Only the fields that change are written, each its own field of one change: edits of
    /// different fields on two machines are both kept; the same field on both is decided by
    /// the merge rule (the later stamp) and logged (`pulse-peer conflicts`).
    @discardableResult
    public func editTask(_ handle: String, _ edit: TaskEdit) throws -> HouseholdTask {
        guard !edit.isEmpty else {
            throw HouseholdError.refuse(.nothingToChange, ["kind": "task"])
        }
        let title = try edit.title.map { try Validation.name($0, what: "task_title", max: 200) }
        let assignee: String?? = try edit.assignee.map { name in try name.map { try memberID(named: $0) } }
        let due: String?? = try edit.due.map { text in try text.map { try Validation.date($0).description } }
        let task = try resolveTask(handle)
        var fields: [String: FieldValue] = [:]
        if let title, title != task.title { fields["title"] = .text(title) }
        if let assignee, assignee != task.assigneeID { fields["assignee"] = assignee.map { .text($0) } ?? .null }
        if let due, due != task.due { fields["due"] = due.map { .text($0) } ?? .null }
        guard !fields.isEmpty else { return task }
        try store.write(member: memberID) { try $0.put(.task, task.id, RowFields(fields)) }
        return try self.task(task.id)
    }

    /// Undoes ``deleteTask(_:)``: the task (by its id) comes back as it was. The focus rule
    /// is not asked again: an undo restores a state the household had, it adds nothing.
    /// Refused when the task is not deleted (or unknown).
    public func undeleteTask(_ id: String) throws -> HouseholdTask {
        guard RowIDRules.isValid(id), try store.row(.task, id)["deleted"]?.boolValue == true else {
            throw HouseholdError.refuse(.nothingToUndo)
        }
        try store.write(member: memberID) { try $0.put(.task, id, ["deleted": .bool(false)]) }
        return try task(id)
    }

    public func deleteTask(_ handle: String) throws -> HouseholdTask {
        let task = try resolveTask(handle)
        try store.write(member: memberID) { try $0.put(.task, task.id, ["deleted": .bool(true)]) }
        return task
    }
}

extension Household {
    static let taskMethods: [APIMethod] = [
        // Writes: the day's recurring tasks are made first.
        .write("task.list", for: APIMethod.everyone) { a, h in
            try h.generateRecurringTasks()
            return try h.tasks(mine: a.flag("mine"))
        },
        .write("task.add", for: APIMethod.everyone) { a, h in
            try h.addTask(a.string("title"), assignee: a.optional("assignee"), due: a.optional("due"), force: a.flag("force"))
        },
        .write("task.edit", for: APIMethod.everyone) { a, h in
            // A key that is absent leaves the field; null clears assignee or due.
            guard a["title"] != .null else { throw HouseholdError.refuse(.titleNotNull) }
            return try h.editTask(a.string("task"), TaskEdit(title: a.optional("title"), assignee: a.edit("assignee"), due: a.edit("due")))
        },
        .write("task.done", for: APIMethod.everyone) { a, h in try h.completeTask(a.string("task")) },
        .write("task.reopen", for: APIMethod.everyone) { a, h in try h.reopenTask(a.string("task"), force: a.flag("force")) },
        .write("task.delete", for: APIMethod.everyone) { a, h in try h.deleteTask(a.string("task")) },
        .write("task.undelete", for: APIMethod.everyone) { a, h in try h.undeleteTask(a.string("task")) },
    ]
}
