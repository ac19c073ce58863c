import FoundationEssentials
import PulseModel
import PulseStore

/// Something that happened in the household, told to people (notifications) and to app
/// clients (the live feed, docs/API.md "subscribe"). Derived from changes — a peer's
/// applied batch or a local commit — never from polling.
public struct HouseholdEvent: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case shoppingAdded = "shopping.added"
        case shoppingChecked = "shopping.checked"
        case shoppingRestocked = "shopping.restocked"
        case shoppingRenamed = "shopping.renamed"
        case shoppingRemoved = "shopping.removed"
        case taskAdded = "task.added"
        case taskAssigned = "task.assigned"
        case taskDone = "task.done"
        case taskReopened = "task.reopened"
        case taskRemoved = "task.removed"
        case kidEarned = "kid.earned"
        case kidRedeemed = "kid.redeemed"
        case kidDeclined = "kid.declined"
        case conflict
        case peerConnected = "peer.connected"
        case peerLost = "peer.lost"
        /// Any other change of a row (backlog, members, settings, …): enough for a live view
        /// to refresh what it shows.
        case changed

    }

    /// The feed's topic (`subscribe`'s `topics`): by kind, and for `changed` by entity.
    public var topic: Topic {
        switch type {
        case .shoppingAdded, .shoppingChecked, .shoppingRestocked, .shoppingRenamed, .shoppingRemoved: return .shopping
        case .taskAdded, .taskAssigned, .taskDone, .taskReopened, .taskRemoved: return .tasks
        case .kidEarned, .kidRedeemed, .kidDeclined: return .kids
        case .conflict, .peerConnected, .peerLost: return .sync
        case .changed:
            switch entity.flatMap(EntityKind.init(rawValue:)) {
            case .shoppingItem?: return .shopping
            case .task?, .recurringTemplate?: return .tasks
            case .backlogCategory?, .backlogItem?: return .backlog
            case .kid?, .catalogueSelection?, .ledgerEntry?: return .kids
            default: return .household
            }
        }
    }

    public enum Topic: String, Sendable, Codable, CaseIterable { case shopping, tasks, backlog, kids, household, sync }

    public var type: Kind
    /// The entity and row the event is about (nil for peer events).
    public var entity: String?
    public var row: String?
    /// What a person calls the row: the item's name, the task's title…
    public var title: String?
    /// The member who made the change (id and name); nil for the system (recurring tasks).
    public var author: String?
    public var authorName: String?
    /// The machine the change was made on: its replica's label (host name).
    public var machine: String?
    /// For `task.assigned` / `task.added`: the assignee's member id.
    public var assignee: String?
    /// When the change was made (its hybrid timestamp's wall clock), Unix milliseconds.
    public var time: Int64
    /// How many changes this event stands for: 1, or more for a summary (a catch-up after
    /// a long absence folds many events of one kind into one).
    public var count: Int
    /// Made on this machine.
    public var local: Bool
    /// For the feed: the resume token of this event (set by the feed when it publishes).
    public var token: String?

    public init(type: Kind, entity: String? = nil, row: String? = nil, title: String? = nil, author: String? = nil,
                authorName: String? = nil, machine: String? = nil, assignee: String? = nil, time: Int64, count: Int = 1,
                local: Bool = false) {
        self.type = type
        self.entity = entity
        self.row = row
        self.title = title
        self.author = author
        self.authorName = authorName
        self.machine = machine
        self.assignee = assignee
        self.time = time
        self.count = count
        self.local = local
    }
}

/// The pure rules that turn one change into events, by the change's shape: the fields a
/// household operation writes say which operation it was (Shopping.swift, Tasks.swift,
/// Kids.swift write exactly these sets). Table-tested in `EventRulesTests`.
public enum EventRules {
    public static func events(of change: Change) -> [HouseholdEvent] {
        // A change names each field once, and a handful: looked up in place, not through a
        // dictionary made per change (a catch-up derives one per change: 100 000 of them).
        let fields = FieldLookup(change.fields)
        func event(_ kind: HouseholdEvent.Kind, title: String? = nil, assignee: String? = nil) -> HouseholdEvent {
            HouseholdEvent(type: kind, entity: change.entity.rawValue, row: change.rowID, title: title, author: change.member,
                           assignee: assignee, time: Int64(change.hlc.milliseconds), count: 1)
        }
        switch change.entity {
        case .shoppingItem:
            let state = fields["state"]?.textValue
            if fields["name"] != nil, fields["listed"] != nil, state == "active" {
                return [event(.shoppingAdded, title: fields["name"]?.textValue)]
            }
            var out: [HouseholdEvent] = []
            if let name = fields["name"]?.textValue { out.append(event(.shoppingRenamed, title: name)) }
            switch state {
            case "restock"?: out.append(event(.shoppingChecked))
            case "active"?: out.append(event(.shoppingRestocked))
            case "deleted"?: out.append(event(.shoppingRemoved))
            default: break
            }
            return out
        case .task:
            let assignee = fields["assignee"]?.textValue
            if fields["title"] != nil, fields["created"] != nil {
                return [event(.taskAdded, title: fields["title"]?.textValue, assignee: assignee)]
            }
            var out: [HouseholdEvent] = []
            if fields["deleted"]?.boolValue == true { return [event(.taskRemoved)] }
            if let assignee { out.append(event(.taskAssigned, assignee: assignee)) }
            switch fields["done"]?.boolValue {
            case true?: out.append(event(.taskDone))
            case false?: out.append(event(.taskReopened))
            default: break
            }
            if out.isEmpty { out.append(event(.changed)) }
            return out
        case .ledgerEntry:
            switch fields["kind"]?.textValue {
            case "earn"?: return [event(.kidEarned, title: fields["title"]?.textValue)]
            case "spend"?: return [event(.kidRedeemed, title: fields["title"]?.textValue)]
            default: return [event(.changed)]
            }
        case .replica, .discoveryKey:
            return [] // bookkeeping of sync, nothing a person or a view shows
        default:
            return [event(.changed)]
        }
    }

    private struct FieldLookup {
        let writes: [FieldWrite]
        init(_ writes: [FieldWrite]) { self.writes = writes }
        subscript(name: String) -> FieldValue? {
            for write in writes where write.field == name { return write.value }
            return nil
        }
    }

    /// Folds a long run of one kind (a catch-up after an absence) into one summary event per
    /// kind: at most `keep` events of a kind are kept as they are; beyond that, one event
    /// with the count stands for all of them (its title nil, its time the latest, its author
    /// and machine nil unless every event of the run shares them).
    public static func summarize(_ events: [HouseholdEvent], keep: Int = 20) -> [HouseholdEvent] {
        var folder = EventFolder(keep: keep)
        for event in events { folder.add(event) }
        return folder.events
    }
}

/// The summarizing rule of ``EventRules/summarize(_:keep:)``, applied as the events arrive
/// (a randomized test holds it equal to the rule applied to the whole list), without an
/// array of every event first. A catch-up of 100 000 changes keeps the
/// events of each kind until the kind's 21st, then folds them, and every later one, into
/// the kind's summary.
public struct EventFolder {
    public let keep: Int
    private var counts: [HouseholdEvent.Kind: Int] = [:]
    /// The result in order; nil where an event was folded into its kind's summary.
    private var slots: [HouseholdEvent?] = []
    /// Where the kept events of a kind are, while it has at most `keep`.
    private var kept: [HouseholdEvent.Kind: [Int]] = [:]
    /// Where a kind's summary is, once it has more.
    private var summaries: [HouseholdEvent.Kind: Int] = [:]

    public init(keep: Int = 20) { self.keep = keep }

    public mutating func add(_ event: HouseholdEvent) {
        let count = counts[event.type, default: 0] + 1
        counts[event.type] = count
        if let summary = summaries[event.type] {
            fold(event, into: summary)
        } else if count <= keep {
            kept[event.type, default: []].append(slots.count)
            slots.append(event)
        } else {
            // The kind's first event becomes its summary, in its place; the others fold in.
            let places = kept.removeValue(forKey: event.type) ?? []
            guard let first = places.first, var summary = slots[first] else {
                // `keep` 0: the event itself is the summary.
                var summary = event
                summary.row = nil
                summary.title = nil
                summaries[event.type] = slots.count
                slots.append(summary)
                return
            }
            summary.row = nil
            summary.title = nil
            slots[first] = summary
            summaries[event.type] = first
            for place in places.dropFirst() {
                if let folded = slots[place] { fold(folded, into: first) }
                slots[place] = nil
            }
            fold(event, into: first)
        }
    }

    /// Changed in place: no copy of the summary per event folded.
    private mutating func fold(_ event: HouseholdEvent, into place: Int) {
        guard slots[place] != nil else { return }
        slots[place]!.count += event.count
        if event.time > slots[place]!.time { slots[place]!.time = event.time }
        if slots[place]!.author != event.author { slots[place]!.author = nil; slots[place]!.authorName = nil }
        if slots[place]!.machine != event.machine { slots[place]!.machine = nil }
    }

    /// The events so far, kept or summarized.
    public var events: [HouseholdEvent] { slots.compactMap { $0 } }
}

extension Household {
    /// The events of `changes` (applied from a peer, or committed here), with titles and
    /// names filled in from the rows as they are now, summarized when many.
    ///
    /// Summarized first, then filled in: a catch-up of 100 000 changes makes a summary and
    /// the 20 events a kind keeps, and only those read titles and names (reading a title
    /// for each event, then dropping it in the summary, took a fifth of a catch-up's time on
    /// the store's actor).
    public func events(of changes: [Change], local: Bool) throws -> [HouseholdEvent] {
        var labels: [ReplicaID: String] = [:]
        var folder = EventFolder()
        var any = false
        for change in changes {
            let events = EventRules.events(of: change)
            guard !events.isEmpty else { continue }
            any = true
            if labels[change.origin] == nil {
                labels[change.origin] = try store.value(.replica, change.origin.description, "label")?.textValue ?? change.origin.description
            }
            for var event in events {
                event.machine = labels[change.origin]
                folder.add(event)
            }
        }
        guard any else { return [] }
        let names = try memberNames()
        var out = folder.events
        for index in out.indices {
            out[index].local = local
            out[index].authorName = out[index].author.flatMap { names[$0] }
            guard out[index].title == nil, out[index].count == 1, let row = out[index].row,
                  let entity = out[index].entity.flatMap(EntityKind.init(rawValue:)) else { continue }
            switch entity {
            case .shoppingItem: out[index].title = try store.value(.shoppingItem, row, "name")?.textValue
            case .task: out[index].title = try store.value(.task, row, "title")?.textValue
            case .ledgerEntry: out[index].title = try store.value(.ledgerEntry, row, "title")?.textValue
            case .backlogItem, .backlogCategory: out[index].title = try store.value(entity, row, "title")?.textValue
            case .member, .kid: out[index].title = try store.value(entity, row, "name")?.textValue
            default: break
            }
        }
        return out
    }
}
