import PulseModel
import PulseStore

/// What an app over CalDAV made of a to-do the household holds (issue 59, decision 0025): the
/// UID and name it gave it, and what the household keeps of it without mapping it, as
/// iCalendar text. Keyed by the item's, task's or project's own id: one a to-do.
public struct CalendarObjectRecord: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case item = "shopping_item"
        case task
        case project = "backlog_item"
    }

    /// The item's, task's or project's id.
    public var id: String
    public var kind: Kind
    public var uid: String
    /// Its name in the collection (`NAME.ics`).
    public var href: String
    /// What is kept (a VTODO holding only that); nil when nothing is.
    public var kept: String?

    public init(id: String, kind: Kind, uid: String, href: String, kept: String?) {
        self.id = id
        self.kind = kind
        self.uid = uid
        self.href = href
        self.kept = kept
    }
}

/// The household's calendar objects (`calendar_object`, replicated): every agent serves an
/// app's to-do under the same UID and name with the same kept properties.
extension Household {
    /// Every calendar object, by its to-do's id.
    public func calendarObjects() throws -> [String: CalendarObjectRecord] {
        var objects: [String: CalendarObjectRecord] = [:]
        for row in try store.rows(.calendarObject) {
            guard let kind = CalendarObjectRecord.Kind(rawValue: row.text("kind")) else { continue }
            objects[row.id] = CalendarObjectRecord(id: row.id, kind: kind, uid: row.text("uid"), href: row.text("href"), kept: row["kept"].textValue)
        }
        return objects
    }

    /// Records `object` (made, or its changed fields written); nothing when it is already so.
    /// The caller checked the to-do is the household's (the CalDAV service, in the same turn).
    public func keepCalendarObject(_ object: CalendarObjectRecord) throws {
        guard RowIDRules.isValid(object.id), (1...255).contains(object.uid.utf8.count), (1...255).contains(object.href.utf8.count),
            (object.kept?.utf8.count ?? 1) <= KeptRules.maxTextBytes, object.kept?.isEmpty != true
        else { throw HouseholdError.refuse(.invalidID, ["kind": "calendar_object", "value": .string(String(object.id.prefix(64)))]) }
        let current = try store.row(.calendarObject, object.id)
        var fields: [String: FieldValue] = [:]
        if current.isEmpty {
            fields = [
                "kind": .text(object.kind.rawValue), "uid": .text(object.uid), "href": .text(object.href), "kept": object.kept.map { .text($0) } ?? .null,
            ]
            try store.write(member: memberID) { try $0.create(.calendarObject, object.id, RowFields(fields)) }
            return
        }
        if current["uid"]?.textValue != object.uid { fields["uid"] = .text(object.uid) }
        if current["href"]?.textValue != object.href { fields["href"] = .text(object.href) }
        if current["kept"]?.textValue != object.kept { fields["kept"] = object.kept.map { .text($0) } ?? .null }
        guard !fields.isEmpty else { return }
        try store.write(member: memberID) { _ = try $0.put(.calendarObject, object.id, RowFields(fields)) }
    }

    /// Runs `body`'s household writes as one transaction: all of them durable together, or,
    /// when it throws, none of them (a PUT of a to-do that is several household writes).
    public func allOrNothing<T>(_ body: () throws -> T) throws -> T {
        try store.atomically(body)
    }
}
