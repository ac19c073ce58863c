import FoundationEssentials

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
}

/// The daily tasks: at most three active at once (the focus rule).
extension Household {
    public static let focusLimit = 3

    /// Active tasks first (oldest first), then completed ones.
    public func tasks() throws -> [HouseholdTask] {
        try store.connection.query("""
            SELECT t.id, t.title, t.done, t.assignee, m.name, t.due, t.created, t.template, t.period
            FROM task t LEFT JOIN member m ON m.id = t.assignee AND m.removed = 0
            WHERE t.deleted = 0 ORDER BY t.done, t.created, t.id
            """) { statement in
            var tasks: [HouseholdTask] = []
            while try statement.step() {
                let name = statement.optionalText(4)
                tasks.append(HouseholdTask(id: statement.text(0), title: statement.text(1), done: statement.int(2) == 1,
                                           assigneeID: name == nil ? nil : statement.optionalText(3), assignee: name,
                                           due: statement.optionalText(5), created: statement.int(6),
                                           template: statement.optionalText(7), period: statement.optionalText(8)))
            }
            return tasks
        }
    }

    public func activeTaskCount() throws -> Int { try tasks().filter { !$0.done }.count }

    private func focusCheck(adding count: Int, force: Bool) throws {
        let active = try tasks().filter { !$0.done }
        guard force || active.count + count <= Self.focusLimit else {
            throw HouseholdError.invalidInput("""
                focus rule: at most \(Self.focusLimit) active tasks, and there are \(active.count) \
                (\(active.map(\.title).joined(separator: ", "))). Finish or delete one first, or pass --force.
                """)
        }
    }

    @discardableResult
    public func addTask(_ title: String, assignee: String? = nil, due: String? = nil, force: Bool = false) throws -> HouseholdTask {
        let title = try Validation.name(title, what: "task title", max: 200)
        let assigneeID = try assignee.map { try memberID(named: $0) }
        let dueDate = try due.map { try Days.parse($0).description }
        try focusCheck(adding: 1, force: force)
        let id = RowIDRules.random()
        try store.write(member: memberID) { tx in
            try tx.create(.task, id, newTaskFields(title, assigneeID: assigneeID, due: dueDate, created: try orderingKey()))
        }
        return try task(id)
    }

    func newTaskFields(_ title: String, assigneeID: String?, due: String?, created: Int64,
                       template: String? = nil, period: String? = nil) -> [String: FieldValue] {
        ["title": .text(title), "done": .bool(false), "assignee": assigneeID.map { .text($0) } ?? .null,
         "due": due.map { .text($0) } ?? .null, "created": .integer(created),
         "template": template.map { .text($0) } ?? .null, "period": period.map { .text($0) } ?? .null, "deleted": .bool(false)]
    }

    func task(_ id: String) throws -> HouseholdTask {
        guard let task = try tasks().first(where: { $0.id == id }) else {
            throw HouseholdError.invalidInput("the task was deleted")
        }
        return task
    }

    /// A task by its position in `tasks()` (active first), title, or id prefix.
    public func resolveTask(_ handle: String) throws -> HouseholdTask {
        try Handles.resolve(handle, in: tasks(), what: "task", list: "task list", name: \.title, id: \.id)
    }

    public func completeTask(_ handle: String) throws -> HouseholdTask {
        let task = try resolveTask(handle)
        guard !task.done else { throw HouseholdError.invalidInput("\(task.title.debugDescription) is already done") }
        try store.write(member: memberID) { try $0.put(.task, task.id, ["done": .bool(true)]) }
        return try self.task(task.id)
    }

    public func reopenTask(_ handle: String, force: Bool = false) throws -> HouseholdTask {
        let task = try resolveTask(handle)
        guard task.done else { throw HouseholdError.invalidInput("\(task.title.debugDescription) is not done") }
        try focusCheck(adding: 1, force: force)
        try store.write(member: memberID) { try $0.put(.task, task.id, ["done": .bool(false)]) }
        return try self.task(task.id)
    }

    public func deleteTask(_ handle: String) throws -> HouseholdTask {
        let task = try resolveTask(handle)
        try store.write(member: memberID) { try $0.put(.task, task.id, ["deleted": .bool(true)]) }
        return task
    }

    /// A key after everything ordered so far, in the clock's units (creation order).
    func orderingKey() throws -> Int64 {
        max(HybridTimestamp(milliseconds: ReplicaStore.systemClock()).rawValue, try store.lastTimestamp().rawValue + 1)
    }
}
