import PeerSync
import PulseCalendar

/// What a client's PUT of a to-do comes to: household writes by its member, through the
/// household's own rules (decision 0025's table), all of them or none
/// (``Household/allOrNothing(_:)``). Pure: the plan is table-tested (`DAVServiceTests`), then
/// carried out in one turn of the store's actor.
///
/// A new to-do is the household's own addition (an item on its list, or brought back from the
/// restock pool, or the one of that name already there; a task; a project), then the plan of
/// the rest of what the client wrote; the UID and name the client gave it, and what the
/// household does not map (`PRIORITY`, `VALARM`, …), are kept with it (``CalendarObjectRecord``).
enum DAVWrite: Equatable, Sendable {
    case renameItem(id: String, to: String, list: String?)
    case noteItem(id: String, note: String?, list: String?)
    case checkItem(id: String, list: String?)
    case restockItem(id: String, list: String?)
    case editTask(id: String, title: String?, due: String??, assignee: String?)
    case completeTask(id: String)
    case reopenTask(id: String)
    case renameProject(id: String, to: String)

    static let invalid = DAVName(DAVXML.caldav, "valid-calendar-object-resource")

    /// The writes `edit` asks of `row`, in order; none when it changes nothing the household maps.
    static func plan(_ edit: DAVToDoEdit, of row: DAVShelf.Row) throws(DAVRefusal) -> [DAVWrite] {
        let summary = edit.summary.trimming(" \t\r\n")
        let note = edit.description.flatMap { $0.trimming(" \t\r\n").isEmpty ? nil : $0 }
        var writes: [DAVWrite] = []
        switch row {
        case let .item(item):
            guard edit.due == nil, edit.assignee == nil else {
                throw DAVRefusal(403, "not_for_item", "a shopping item has no due day or assignee: nothing was changed", precondition: invalid)
            }
            if summary != item.name { writes.append(.renameItem(id: item.id, to: edit.summary, list: item.list)) }
            if note != item.note { writes.append(.noteItem(id: item.id, note: note, list: item.list)) }
            if edit.done != (item.state == .restock) {
                writes.append(edit.done ? .checkItem(id: item.id, list: item.list) : .restockItem(id: item.id, list: item.list))
            }
        case let .task(task):
            guard note == nil else {
                throw DAVRefusal(403, "not_for_task", "a task has no note here: nothing was changed", precondition: invalid)
            }
            // An app that leaves out the assignee (it keeps no X- property) changes nobody's.
            let assignee = edit.assignee.flatMap { $0.trimming(" \t\r\n").isEmpty ? nil : $0.trimming(" \t\r\n") }
            let title = summary != task.title ? edit.summary : nil
            let due: String?? = edit.due != task.due ? .some(edit.due) : .none
            let reassign = assignee != nil && assignee?.lowercased() != task.assignee?.lowercased() ? assignee : nil
            if title != nil || due != nil || reassign != nil { writes.append(.editTask(id: task.id, title: title, due: due, assignee: reassign)) }
            if edit.done != task.done { writes.append(edit.done ? .completeTask(id: task.id) : .reopenTask(id: task.id)) }
        case let .project(project):
            guard !edit.done else {
                throw DAVRefusal(403, "project_done", "a project is not completed: it becomes a task on the House Pulse page", precondition: invalid)
            }
            guard edit.due == nil, note == nil, edit.assignee == nil else {
                throw DAVRefusal(403, "not_for_project", "a project has only a title here: nothing was changed", precondition: invalid)
            }
            if summary != project.title { writes.append(.renameProject(id: project.id, to: edit.summary)) }
        }
        return writes
    }

    /// A new to-do in a collection holding `holds`: the household's own addition, as the page
    /// makes it; the rest of `edit` is planned against what it made (``plan(_:of:)``).
    static func add(_ edit: DAVToDoEdit, to holds: DAVShelf.Holds, on household: Household) throws -> DAVShelf.Row {
        switch holds {
        case let .items(list):
            let addition = try household.addOrRestockShoppingItems([ShoppingEntry(name: edit.summary)], on: list)
            guard let item = addition.items.first else { throw HouseholdError.refuse(.nothingToAdd) }
            return .item(item)
        case let .tasks(member):
            let assignee = member ?? edit.assignee.flatMap { $0.trimming(" \t\r\n").isEmpty ? nil : $0.trimming(" \t\r\n") }
            return .task(try household.addTask(edit.summary, assignee: assignee, due: edit.due))
        case let .projects(category):
            return .project(try household.addBacklogItem(edit.summary, to: category))
        }
    }

    /// Carries the write out as `household` (acting as the app's member).
    func run(on household: Household) throws {
        switch self {
        case let .renameItem(id, name, list): _ = try household.renameShoppingItem(id, to: name, on: list)
        case let .noteItem(id, note, list): _ = try household.editShoppingItem(id, ShoppingItemEdit(note: .some(note)), on: list)
        case let .checkItem(id, list): _ = try household.checkShoppingItem(id, on: list)
        case let .restockItem(id, list): _ = try household.restockShoppingItem(id, on: list)
        case let .editTask(id, title, due, assignee):
            _ = try household.editTask(id, Household.TaskEdit(title: title, assignee: assignee.map { .some($0) }, due: due))
        case let .completeTask(id): _ = try household.completeTask(id)
        case let .reopenTask(id): _ = try household.reopenTask(id)
        case let .renameProject(id, name): _ = try household.renameBacklogItem(id, to: name)
        }
    }

    /// A DELETE of `row`: the household's own deletion of it.
    static func delete(_ row: DAVShelf.Row, on household: Household) throws {
        switch row {
        case let .item(item): _ = try household.deleteShoppingItem(item.id, on: item.list)
        case let .task(task): _ = try household.deleteTask(task.id)
        case let .project(project): _ = try household.removeBacklogItem(project.id)
        }
    }
}
