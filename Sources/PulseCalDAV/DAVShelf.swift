import Crypto
import FoundationEssentials
import PeerSync
import PulseCalendar

/// One member's CalDAV space as the household holds it at one read (decision 0025): the
/// shopping lists (`shopping`, `list-ID`), the tasks (`tasks`) and each member's
/// (`tasks-MEMBER`), each backlog category (`backlog-ID`), named in the member's language; in
/// each, one VTODO per item, task or project, named by its row id (`ID.ics`, its UID too), or
/// as the app that made it or changed it named it (``CalendarObjectRecord``).
struct DAVShelf: Sendable {
    /// The household's row a to-do is.
    enum Row: Sendable {
        case item(ShoppingItem)
        case task(HouseholdTask)
        case project(BacklogItem)

        var id: String {
            switch self {
            case let .item(item): item.id
            case let .task(task): task.id
            case let .project(project): project.id
            }
        }

        var kind: CalendarObjectRecord.Kind {
            switch self {
            case .item: .item
            case .task: .task
            case .project: .project
            }
        }
    }

    /// What a new to-do in a collection becomes.
    enum Holds: Sendable, Equatable {
        /// Items of a shopping list (nil: the household's first).
        case items(list: String?)
        /// Tasks; the member's (by name) in a member's collection.
        case tasks(assignee: String?)
        /// Projects of a backlog category.
        case projects(category: String)
    }

    struct Object: Sendable {
        let row: Row
        let name: String
        let uid: String
        /// What an app made of it, as the household keeps it (nil: nothing yet).
        let record: CalendarObjectRecord?
        let calendar: ICalComponent
        let text: String
        let etag: String
    }

    struct Collection: Sendable {
        let id: String
        let name: String
        let holds: Holds
        let objects: [Object]
        /// Moves exactly when what a client would read of the list moves (its `getctag`, and
        /// for now its sync token).
        let token: String
    }

    let member: String
    let memberName: String
    /// The member's language (their refusals are said in it).
    let language: String
    /// Whether the password signed in with is still live and its member still in the household.
    let live: Bool
    let collections: [Collection]

    init(_ household: Household, member: String, password: String) throws {
        self.member = member
        let members = try household.members()
        let me = members.first { $0.id == member }
        let passwords = try household.appPasswords()
        live = me != nil && passwords.contains { $0.id == password && $0.revoked == nil && $0.memberID == member }
        memberName = me?.name ?? ""
        language = me?.language ?? "en"
        guard live else {
            collections = []
            return
        }
        let records = try household.calendarObjects()
        let words = MessageCatalogue.builtIn(language) ?? MessageCatalogue.builtIn("en")
        func say(_ key: String, _ params: [String: JSONValue] = [:]) -> String { words?.text(key, params) ?? key }
        var collections: [Collection] = []
        for list in try household.shoppingLists() {
            let items = try household.shoppingItems(.active, on: list.id) + household.shoppingItems(.restock, on: list.id)
            let todos = items.map { item in
                (
                    Row.item(item),
                    DAVToDo(
                        uid: item.id, summary: item.name, done: item.state == .restock,
                        completed: item.state == .restock ? HybridTimestamp(rawValue: item.listed).milliseconds : nil,
                        description: item.note, created: Self.created(item.id), modified: nil)
                )
            }
            collections.append(
                Self.collection(
                    list.id.map { "list-\($0)" } ?? "shopping", list.name ?? say("caldav.collection.shopping"), .items(list: list.id), todos, records))
        }
        let tasks = try household.tasks()
        func todo(_ task: HouseholdTask) -> (Row, DAVToDo) {
            (
                .task(task),
                DAVToDo(
                    uid: task.id, summary: task.title, done: task.done, due: task.due, assignee: task.assignee,
                    created: HybridTimestamp(rawValue: task.created).milliseconds, modified: nil)
            )
        }
        collections.append(Self.collection("tasks", say("caldav.collection.tasks"), .tasks(assignee: nil), tasks.map(todo), records))
        for person in members {
            collections.append(
                Self.collection(
                    "tasks-\(person.id)", say("caldav.collection.member_tasks", ["name": .string(person.name)]), .tasks(assignee: person.name),
                    tasks.filter { $0.assigneeID == person.id }.map(todo), records))
        }
        for category in try household.backlog() {
            let todos = category.items.map { (Row.project($0), DAVToDo(uid: $0.id, summary: $0.title, created: Self.created($0.id), modified: nil)) }
            collections.append(
                Self.collection(
                    "backlog-\(category.id)", say("caldav.collection.backlog", ["title": .string(category.title)]), .projects(category: category.id), todos,
                    records))
        }
        self.collections = collections
    }

    static func collection(
        _ id: String, _ name: String, _ holds: Holds, _ todos: [(Row, DAVToDo)], _ records: [String: CalendarObjectRecord]
    ) -> Collection {
        let names = names(todos.map(\.0.id), records)
        let objects = todos.map { row, todo in
            var todo = todo
            let record = records[row.id].flatMap { $0.kind == row.kind ? $0 : nil }
            let (name, uid) = names[row.id] ?? ("\(row.id).ics", row.id)
            todo.uid = uid
            if let kept = record?.kept.flatMap(DAVKept.init(text:)) { todo.kept = kept }
            let calendar = todo.calendar
            let text = ICalendar.serialize(calendar)
            return Object(row: row, name: name, uid: uid, record: record, calendar: calendar, text: text, etag: "\"\(digest(text))\"")
        }
        let state = ([name] + objects.map { "\($0.name) \($0.etag)" }).joined(separator: "\n")
        return Collection(id: id, name: name, holds: holds, objects: objects, token: "urn:house-pulse:sync:\(digest(state))")
    }

    /// Each to-do's name and UID in one collection: the app's where one gave them, its row id's
    /// otherwise. Two to-dos an app named alike (two agents apart each given one): the lower
    /// row id keeps the name or UID, the other is served under its row id's, the same on every
    /// agent.
    static func names(_ ids: [String], _ records: [String: CalendarObjectRecord]) -> [String: (name: String, uid: String)] {
        var names: [String: (name: String, uid: String)] = [:]
        var takenNames = Set(ids.map { "\($0).ics" }), takenUIDs = Set(ids)
        for id in ids.sorted() {
            guard let record = records[id] else { continue }
            let name = record.href == "\(id).ics" || !takenNames.contains(record.href) ? record.href : "\(id).ics"
            let uid = record.uid == id || !takenUIDs.contains(record.uid) ? record.uid : id
            takenNames.insert(name)
            takenUIDs.insert(uid)
            names[id] = (name, uid)
        }
        return names
    }

    /// The first 16 hex digits of the text's SHA-256.
    static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).prefix(8).map { byte in
            let hex = Array("0123456789abcdef")
            return String([hex[Int(byte >> 4)], hex[Int(byte & 15)]])
        }.joined()
    }

    /// When a row was made, read from its id when it is a version 7 UUID (its first 48 bits are
    /// Unix milliseconds); nil for an older row's id.
    static func created(_ id: String) -> Int64? {
        let hex = Array(id.utf8.filter { $0 != UInt8(ascii: "-") })
        guard hex.count == 32, hex[12] == UInt8(ascii: "7") else { return nil }
        return Int64(String(decoding: hex[0..<12], as: UTF8.self), radix: 16)
    }

    func collection(_ id: String) -> Collection? { collections.first { $0.id == id } }

    func resource(of object: Object, in collection: Collection) -> DAVResource {
        .object(member: member, collection: collection.id, name: object.name, etag: object.etag, text: object.text)
    }

    /// What `target` is for this member; another member's path is not found, as a path that
    /// names nothing.
    func resource(_ target: DAVTarget) throws(DAVRefusal) -> DAVResource {
        let notFound = DAVRefusal(404, "not_found", "no such resource")
        if let user = target.user, user != member { throw notFound }
        switch target {
        case .wellKnown: throw notFound
        case .root: return .root(principal: member)
        case .principal: return .principal(member: member, name: memberName)
        case .home: return .home(member: member)
        case let .collection(_, id):
            guard let collection = collection(id) else { throw notFound }
            return .collection(member: member, id: id, name: collection.name, token: collection.token)
        case let .object(_, id, name):
            guard let collection = collection(id), let object = collection.objects.first(where: { $0.name == name }) else { throw notFound }
            return resource(of: object, in: collection)
        }
    }

    /// What a PROPFIND at depth 1 lists below `target`.
    func children(of target: DAVTarget) -> [DAVResource] {
        switch target {
        case .root: [.principal(member: member, name: memberName)]
        case .principal: [.home(member: member)]
        case .home: collections.map { .collection(member: member, id: $0.id, name: $0.name, token: $0.token) }
        case let .collection(_, id): collection(id).map { c in c.objects.map { resource(of: $0, in: c) } } ?? []
        case .object, .wellKnown: []
        }
    }
}
