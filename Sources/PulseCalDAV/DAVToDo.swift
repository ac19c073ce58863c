import FoundationEssentials
import PeerSync
import PulseCalendar

/// A shopping item, a task or a backlog project as a VTODO (decision 0025's table), both ways.
/// Pure: the service fills one from the household to serve it, and reads what a client PUTs
/// into a ``DAVToDoEdit`` that becomes an ordinary household write.
public struct DAVToDo: Equatable, Sendable {
    public var uid: String
    public var summary: String
    public var done: Bool
    /// When it was completed (Unix ms), where the household knows it.
    public var completed: Int64?
    /// The day it is due (`2026-12-07`).
    public var due: String?
    public var description: String?
    /// A task's assignee, by name (`X-PULSE-ASSIGNEE`).
    public var assignee: String?
    /// Unix ms, where the household knows them: the row's creation (`CREATED`) and its last
    /// change (`LAST-MODIFIED`); `DTSTAMP` is the later known one (1970 when neither is).
    public var created: Int64?
    public var modified: Int64?
    /// What a client wrote that the household does not map, given back as it came.
    public var kept: DAVKept

    public init(
        uid: String, summary: String, done: Bool? = nil, completed: Int64? = nil, due: String? = nil, description: String? = nil,
        assignee: String? = nil, created: Int64?, modified: Int64?, kept: DAVKept = DAVKept()
    ) {
        self.uid = uid
        self.summary = summary
        self.done = done ?? (completed != nil)
        self.completed = completed
        self.due = due
        self.description = description
        self.assignee = assignee
        self.created = created
        self.modified = modified
        self.kept = kept
    }

    public static let productID = "-//House Pulse//pulse-peer//EN"

    /// The object as served: a VCALENDAR holding the one VTODO.
    public var calendar: ICalComponent {
        var properties = [ICalProperty("UID", uid), ICalProperty("DTSTAMP", Self.utc(modified ?? created ?? 0))]
        if let created { properties.append(ICalProperty("CREATED", Self.utc(created))) }
        if let modified { properties.append(ICalProperty("LAST-MODIFIED", Self.utc(modified))) }
        properties.append(ICalProperty("SUMMARY", text: summary))
        if done {
            properties.append(ICalProperty("STATUS", "COMPLETED"))
            if let completed { properties.append(ICalProperty("COMPLETED", Self.utc(completed))) }
            properties.append(ICalProperty("PERCENT-COMPLETE", "100"))
        } else {
            properties.append(ICalProperty("STATUS", "NEEDS-ACTION"))
        }
        if let due, let day = ICalDate(value: due.replacingDashes) {
            properties.append(ICalProperty("DUE", day.value, parameters: [ICalParameter("VALUE", ["DATE"])]))
        }
        if let description { properties.append(ICalProperty("DESCRIPTION", text: description)) }
        if let assignee { properties.append(ICalProperty(DAVToDoEdit.assigneeProperty, text: assignee)) }
        let todo = ICalComponent("VTODO", properties: properties + kept.properties, components: kept.components)
        return ICalComponent(
            "VCALENDAR", properties: [ICalProperty("VERSION", "2.0"), ICalProperty("PRODID", Self.productID)], components: [todo])
    }

    public var text: String { ICalendar.serialize(calendar) }

    /// `20261205T101010Z` from Unix milliseconds (the day by the household's own calendar, `Days`).
    static func utc(_ milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = Int(seconds - days * 86_400)
        let day = Days.civil(Int(days))
        return ICalDate(year: day.year, month: day.month, day: day.day, time: (rest / 3600, rest % 3600 / 60, rest % 60), utc: true).value
    }
}

/// What the household keeps of a client's object without mapping it: properties and
/// components, in order, stored as a replicated row's text field (``text``: 4096 bytes at most,
/// the open schema's bound).
public struct DAVKept: Equatable, Sendable {
    public var properties: [ICalProperty] = []
    public var components: [ICalComponent] = []

    public static let maxBytes = 4096

    public init(properties: [ICalProperty] = [], components: [ICalComponent] = []) {
        self.properties = properties
        self.components = components
    }

    public var isEmpty: Bool { properties.isEmpty && components.isEmpty }

    /// As stored: a JSON array of the iCalendar content lines, unfolded ("" when nothing is
    /// kept). A row's text holds no control characters, and a content line none once unfolded
    /// (a tab inside one is JSON's `\t`).
    public var text: String {
        guard !isEmpty else { return "" }
        let lines = ICalendar.contentLines(ICalComponent("VTODO", properties: properties, components: components))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(Array(lines.dropFirst().dropLast())) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Read back from ``text``; nil when it is not what ``text`` writes.
    public init?(text: String) {
        guard !text.isEmpty else {
            self.init()
            return
        }
        guard let lines = try? JSONDecoder().decode([String].self, from: Data(text.utf8)),
            !lines.contains(where: { $0.utf8.contains(10) || $0.utf8.contains(13) }),
            let calendar = try? ICalendar.parse(
                Array((["BEGIN:VCALENDAR", "BEGIN:VTODO"] + lines + ["END:VTODO", "END:VCALENDAR", ""]).joined(separator: "\r\n").utf8)),
            calendar.components.count == 1, calendar.components[0].name == "VTODO"
        else { return nil }
        self.init(properties: calendar.components[0].properties, components: calendar.components[0].components)
    }
}

/// What a client's PUT asks: the mapped fields as it wrote them, and what is kept.
public struct DAVToDoEdit: Equatable, Sendable {
    public var uid: String
    public var summary: String
    public var done: Bool
    /// The due day (`2026-12-07`), nil when there is none.
    public var due: String?
    public var description: String?
    public var assignee: String?
    public var kept: DAVKept

    public static let assigneeProperty = "X-PULSE-ASSIGNEE"
    /// Mapped to the household's fields, or derived from them (`COMPLETED` from the state).
    static let mapped: Set<String> = ["UID", "SUMMARY", "STATUS", "COMPLETED", "PERCENT-COMPLETE", "DUE", "DESCRIPTION", assigneeProperty]
    /// Written by us from the row's own stamps: a client's are not kept.
    static let ours: Set<String> = ["DTSTAMP", "LAST-MODIFIED", "CREATED", "SEQUENCE"]

    /// Reads a client's object: one VTODO (and any time zones it refers to, which we do not
    /// need: a due date is read as its day), a UID, a status we have. What is refused says why
    /// with the status and precondition of RFC 4791 §5.3.2.
    public init(_ object: ICalComponent) throws(DAVRefusal) {
        let todos = object.components.filter { $0.name == "VTODO" }
        let others = object.components.filter { $0.name != "VTODO" && $0.name != "VTIMEZONE" }
        guard others.isEmpty else {
            throw DAVRefusal(
                403, "supported_component", "only to-dos (VTODO) are kept here, not \(others[0].name.prefix(20))",
                precondition: DAVName(DAVXML.caldav, "supported-calendar-component"))
        }
        guard todos.count == 1, let todo = todos.first else {
            throw DAVRefusal(
                403, todos.isEmpty ? "no_todo" : "several_todos",
                todos.isEmpty ? "the object holds no to-do" : "one to-do an object: changed occurrences of a repeating one are not kept here",
                precondition: DAVName(DAVXML.caldav, "valid-calendar-object-resource"))
        }
        guard let uid = todo.first("UID")?.value, !uid.isEmpty, uid.utf8.count <= 255, todo.all("UID").count == 1 else {
            throw DAVRefusal(
                400, "bad_uid", "a to-do has one UID of 1 to 255 bytes", precondition: DAVName(DAVXML.caldav, "valid-calendar-object-resource"))
        }
        self.uid = uid
        summary = todo.first("SUMMARY")?.text ?? ""
        switch todo.first("STATUS")?.value.uppercased() {
        case nil: done = todo.first("COMPLETED") != nil
        case "NEEDS-ACTION", "IN-PROCESS": done = false
        case "COMPLETED": done = true
        case let other?:
            throw DAVRefusal(
                403, "unsupported_status", "STATUS:\(other.prefix(20)) is not kept here: delete the to-do instead",
                precondition: DAVName(DAVXML.caldav, "valid-calendar-data"))
        }
        if let property = todo.first("DUE") {
            let date: ICalDate
            do { date = try ICalDate(property) } catch {
                throw DAVRefusal(400, "bad_due", "DUE is not a date: \(error)", precondition: DAVName(DAVXML.caldav, "valid-calendar-data"))
            }
            due = date.isoDay
        } else {
            due = nil
        }
        description = todo.first("DESCRIPTION")?.text
        assignee = todo.first(Self.assigneeProperty)?.text
        kept = DAVKept(
            properties: todo.properties.filter { !Self.mapped.contains($0.name) && !Self.ours.contains($0.name) }, components: todo.components)
        guard kept.text.utf8.count <= DAVKept.maxBytes else {
            throw DAVRefusal(
                413, "too_much_kept", "what this to-do holds beside its title, state, due day and note is over \(DAVKept.maxBytes) bytes",
                precondition: DAVName(DAVXML.caldav, "max-resource-size"))
        }
    }
}

extension String {
    /// `2026-12-07` → `20261207`.
    var replacingDashes: String { String(filter { $0 != "-" }) }
}
