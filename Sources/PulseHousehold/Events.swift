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
        /// The sync state changed (a computer became in sync, or has changes to send or take,
        /// or a problem): `title` is `synced`, `syncing`, `problem`, `unreachable` or `alone`,
        /// judged from the same status every view shows, so a header and a list of computers
        /// reloading on it never disagree.
        case peerSync = "peer.sync"
        /// The parents' PIN was set or changed, a reset of it was asked, or it was cleared:
        /// `title` is `changed`, `reset_asked` or `cleared` (docs/SECURITY.md: every adult is told).
        case kidPIN = "kid.pin"
        /// A member goes shopping (issue 57): `title` the shop when named, `list`/`listName` the list.
        case shoppingTrip = "shopping.trip"
        /// A kid reported a chore (issue 58): it waits for a parent; `kid` the kid.
        case kidReported = "kid.reported"
    }

    /// The feed's topic (`subscribe`'s `topics`): by kind, and for `changed` by entity.
    public var topic: Topic {
        switch type {
        case .shoppingAdded, .shoppingChecked, .shoppingRestocked, .shoppingRenamed, .shoppingRemoved, .shoppingTrip: return .shopping
        case .taskAdded, .taskAssigned, .taskDone, .taskReopened, .taskRemoved: return .tasks
        case .kidEarned, .kidRedeemed, .kidDeclined, .kidReported, .kidPIN: return .kids
        case .conflict, .peerConnected, .peerLost, .peerSync: return .sync
        case .changed:
            switch entity.flatMap(EntityKind.init(rawValue:)) {
            // A check-off row alone: a person's correction of the order; a list: made, renamed, deleted.
            case .shoppingItem?, .shoppingCheckoff?, .shoppingList?, .shoppingTrip?: return .shopping
            case .task?, .recurringTemplate?, .away?, .rotationSwap?: return .tasks
            case .backlogCategory?, .backlogItem?: return .backlog
            case .kid?, .catalogueSelection?, .ledgerEntry?, .savingsGoal?, .choreReport?: return .kids
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
    /// A kids' built-in item's message (`catalogue.rule_001`) while `title` is its built-in
    /// one: each reader shows it in their language (``CatalogueItem/titleKey``).
    public var titleKey: String? = nil
    /// The member who made the change (id and name); nil for the system (recurring tasks).
    public var author: String?
    public var authorName: String?
    /// The machine the change was made on: its replica's label (host name).
    public var machine: String?
    /// For `task.assigned` / `task.added`: the assignee's member id.
    public var assignee: String?
    /// For `kid.earned` / `kid.redeemed` of a chore done or a reward redeemed: the kid who
    /// did it (id), whose name is then `authorName` — the kid acted, on whoever's computer.
    /// Nil for an adult's adjustment (its author is the adult).
    public var kid: String? = nil
    /// For a shopping item's event: the list it is on (its id; nil: the first list) and, for a
    /// list other than the first, its name (``Household/filledIn(_:local:)``).
    public var list: String? = nil
    public var listName: String? = nil
    /// For `shopping.added` / `shopping.restocked`: the item's `listed`, a hybrid clock reading
    /// as a decimal string (it is beyond what JavaScript's `Number` holds exactly), so that a
    /// page shows it at once as the agent's answer will ("added while you were out").
    public var listed: String? = nil
    /// For a summary of shopping items (``count`` > 1): true when its items are not all on one
    /// list, or their lists are not known (a run of check-offs or restocks): no list is named.
    public var severalLists: Bool? = nil
    /// When the change was made (its hybrid timestamp's wall clock), Unix milliseconds.
    public var time: Int64
    /// How many changes this event stands for: 1, or more for a summary (a catch-up after
    /// a long absence folds many events of one kind into one).
    public var count: Int
    /// Made on this machine.
    public var local: Bool
    /// For the feed: the resume token of this event (set by the feed when it publishes).
    public var token: String?

    public init(
        type: Kind, entity: String? = nil, row: String? = nil, title: String? = nil, author: String? = nil,
        authorName: String? = nil, machine: String? = nil, assignee: String? = nil, time: Int64, count: Int = 1,
        local: Bool = false
    ) {
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
/// Kids.swift write exactly these sets). Table-tested in `NotificationRulesTests`.
public enum EventRules {
    /// The kinds of event one change makes, in order (at most two: an item renamed and
    /// checked in one change, a task reassigned and done), without making the events.
    public static func kinds(of change: Change) -> EventKinds {
        // A change names each field once, and a handful: looked up in place, not through a
        // dictionary made per change (a catch-up derives one per change: 100 000 of them).
        let fields = FieldLookup(change.fields)
        var out = EventKinds()
        switch change.entity {
        case .shoppingItem:
            let state = fields["state"]?.textValue
            if fields["name"] != nil, fields["listed"] != nil, state == "active" { return EventKinds(.shoppingAdded) }
            if fields["name"]?.textValue != nil { out.append(.shoppingRenamed) }
            switch state {
            case "restock"?: out.append(.shoppingChecked)
            // Back on the list with a new place: restocked. Back with no new place: an undo
            // (of a clear, of a removal) — the same item returning, not news to anyone.
            case "active"? where fields["listed"] != nil: out.append(.shoppingRestocked)
            case "active"?: out.append(.changed)
            case "deleted"?: out.append(.shoppingRemoved)
            default: break
            }
            // A quantity or a note alone, or a move to another list (issue 57): shown wherever the item is.
            if out.isEmpty, fields["quantity"] != nil || fields["note"] != nil || fields["list"] != nil { out.append(.changed) }
        case .task:
            if fields["title"] != nil, fields["created"] != nil { return EventKinds(.taskAdded) }
            if fields["deleted"]?.boolValue == true { return EventKinds(.taskRemoved) }
            if fields["assignee"]?.textValue != nil { out.append(.taskAssigned) }
            switch fields["done"]?.boolValue {
            case true?: out.append(.taskDone)
            case false?: out.append(.taskReopened)
            default: break
            }
            if out.isEmpty { out.append(.changed) }
        case .ledgerEntry:
            switch fields["kind"]?.textValue {
            case "earn"?: out.append(.kidEarned)
            case "spend"?: out.append(.kidRedeemed)
            default: out.append(.changed)
            }
        case .choreReport:
            // Reported: waiting for a parent; a decline: shown where the kid looks.
            out.append(fields["created"] != nil ? .kidReported : .changed)
        case .shoppingTrip:
            // Going: a trip starting; back (its end), or anything else: shown where the list is.
            out.append(fields["started"] != nil ? .shoppingTrip : .changed)
        case .kidsPIN:
            // Never the hash itself: only that the PIN changed (every adult is told).
            if fields["hash"] != nil || fields["reset"] != nil { out.append(.kidPIN) }
        case .replica, .discoveryKey:
            break // bookkeeping of sync: nothing a person or a view shows
        default:
            out.append(.changed)
        }
        return out
    }

    /// The event of `kind` that `change` makes: the title and assignee it carries for
    /// that kind (the item's new name, the task's title, the ledger entry's title).
    public static func event(_ kind: HouseholdEvent.Kind, of change: Change) -> HouseholdEvent {
        let fields = FieldLookup(change.fields)
        let title: String? =
            switch kind {
            case .shoppingAdded, .shoppingRenamed: fields["name"]?.textValue
            case .shoppingTrip: fields["shop"]?.textValue
            case .taskAdded, .kidEarned, .kidRedeemed, .kidReported: fields["title"]?.textValue
            case .kidPIN: Household.pinChangeKind(hash: fields["hash"], reset: fields["reset"])
            default: nil
            }
        let assignee = kind == .taskAdded || kind == .taskAssigned ? fields["assignee"]?.textValue : nil
        var event = HouseholdEvent(
            type: kind, entity: change.entity.rawValue, row: change.rowID, title: title, author: change.member,
            assignee: assignee, time: Int64(change.hlc.milliseconds), count: 1)
        // The list an addition names (nil: the first); ``Household/filledIn(_:local:)`` reads
        // where a kept event's item is now, a summary keeps this.
        if kind == .shoppingTrip || kind == .shoppingAdded { event.list = fields["list"]?.textValue }
        if kind == .shoppingAdded || kind == .shoppingRestocked { event.listed = fields["listed"]?.integerValue.map { String($0) } }
        if kind == .kidEarned || kind == .kidRedeemed || kind == .kidReported, let title {
            event.titleKey = Catalogue.titleKey(id: fields["selection"]?.textValue, title: title)
        }
        // A catalogue item's entry is the kid's own doing; an adjustment has no item.
        if kind == .kidEarned || kind == .kidRedeemed || kind == .kidReported, fields["selection"]?.textValue != nil {
            event.kid = fields["kid"]?.textValue
        }
        return event
    }

    public static func events(of change: Change) -> [HouseholdEvent] {
        kinds(of: change).map { event($0, of: change) }
    }

    /// The events of batches of changes, in order, summarized (``summarize(_:keep:)``) as
    /// they are derived: an event is made only while its kind is kept, and a change whose
    /// kinds are all summarized already only counts (a catch-up of 100 000 changes makes a
    /// few dozen events). `labels` names each origin's machine (its replica's label); an
    /// origin without one is named by its id. Titles of kept events are those the changes
    /// carry; names and current titles are filled in by ``Household/filledIn(_:local:)``.
    /// Batches, not one array: the agent's events worker takes every batch applied since it
    /// last ran without joining them. Not generic: called from another module, a generic
    /// function runs unspecialized.
    public static func events(of batches: [[Change]], labels: [ReplicaID: String], keep: Int = 20) -> [HouseholdEvent] {
        var deriver = Deriver(folder: EventFolder(keep: keep), labels: labels)
        for changes in batches {
            // Through a buffer pointer: a change is read where it is (the array's subscript
            // copies it out and destroys the copy, a retain and a release of each string).
            changes.withUnsafeBufferPointer { changes in
                for index in changes.indices { deriver.add(changes[index]) }
            }
        }
        return deriver.folder.events
    }

    private struct Deriver {
        var folder: EventFolder
        let labels: [ReplicaID: String]
        var origin: ReplicaID?
        var machine = ""

        mutating func add(_ change: borrowing Change) { // borrowed: a copy cost a retain and a release a change
            let kinds = EventRules.kinds(of: change)
            guard !kinds.isEmpty else { return }
            if change.origin != origin {
                origin = change.origin
                machine = labels[change.origin] ?? change.origin.description
            }
            for kind in kinds
            where !folder.folded(
                kind, time: Int64(change.hlc.milliseconds), writer: change.writer, machine: machine,
                list: kind == .shoppingAdded ? .on(FieldLookup(change.fields)["list"]?.textValue) : .unknown)
            {
                var event = EventRules.event(kind, of: change)
                event.machine = machine
                folder.add(event)
            }
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

/// The kinds of event of one change (at most two), kept inline: no array per change.
public struct EventKinds: Sequence, Equatable, Sendable {
    private var first: HouseholdEvent.Kind?
    private var second: HouseholdEvent.Kind?

    public init() {}
    init(_ kind: HouseholdEvent.Kind) { first = kind }

    mutating func append(_ kind: HouseholdEvent.Kind) {
        if first == nil { first = kind } else { precondition(second == nil, "a change makes at most two events"); second = kind }
    }

    public var isEmpty: Bool { first == nil }

    public struct Iterator: IteratorProtocol {
        fileprivate var kinds: EventKinds
        public mutating func next() -> HouseholdEvent.Kind? {
            defer { kinds.first = kinds.second; kinds.second = nil }
            return kinds.first
        }
    }

    public func makeIterator() -> Iterator { Iterator(kinds: self) }
}

extension HouseholdEvent.Kind {
    /// The kind's place in `allCases`, for tables indexed by kind (a dictionary keyed by a
    /// kind hashes its raw string: a catch-up counted 100 000 of them).
    var index: Int {
        switch self {
        case .shoppingAdded: 0
        case .shoppingChecked: 1
        case .shoppingRestocked: 2
        case .shoppingRenamed: 3
        case .shoppingRemoved: 4
        case .taskAdded: 5
        case .taskAssigned: 6
        case .taskDone: 7
        case .taskReopened: 8
        case .taskRemoved: 9
        case .kidEarned: 10
        case .kidRedeemed: 11
        case .kidDeclined: 12
        case .conflict: 13
        case .peerConnected: 14
        case .peerLost: 15
        case .changed: 16
        case .peerSync: 17
        case .kidPIN: 18
        case .shoppingTrip: 19
        case .kidReported: 20
        }
    }

    static let count = allCases.count
}

/// The summarizing rule of ``EventRules/summarize(_:keep:)``, applied as the events arrive
/// (a randomized test holds it equal to the rule applied to the whole list), without an
/// array of every event first. A catch-up of 100 000 changes keeps the
/// events of each kind until the kind's 21st, then folds them, and every later one, into
/// the kind's summary.
public struct EventFolder {
    public let keep: Int
    /// By kind (``HouseholdEvent/Kind/index``): how many so far.
    private var counts = [Int](repeating: 0, count: HouseholdEvent.Kind.count)
    /// The result in order; nil where an event was folded into its kind's summary.
    private var slots: [HouseholdEvent?] = []
    /// By kind: where its kept events are, while it has at most `keep`.
    private var kept = [[Int]](repeating: [], count: HouseholdEvent.Kind.count)
    /// By kind, once it has more: its summary so far, written into its slot by ``events``
    /// (folding into these small values, not into the slot's event, copies no event).
    private var summaries = [Summary?](repeating: nil, count: HouseholdEvent.Kind.count)

    private struct Summary {
        let place: Int
        var count: Int
        var time: Int64
        /// The run's author and machine while every event shares them; nil once two differ.
        /// The author as a change holds it (no text made per change folded).
        var author: TextID?
        var machine: String?
        var sameAuthor = true
        var sameMachine = true
        /// The one list of every item of the run (shopping additions), or `.unknown`.
        var list: ListOf

        init(place: Int, _ event: HouseholdEvent) {
            self.place = place
            count = event.count
            time = event.time
            author = event.author.map(TextID.init)
            machine = event.machine
            list = ListOf(event)
        }

        mutating func fold(count: Int, time: Int64, author: TextID?, machine: String?, list: ListOf) {
            self.count += count
            if time > self.time { self.time = time }
            if sameAuthor && self.author != author { sameAuthor = false; self.author = nil }
            if sameMachine && self.machine != machine { sameMachine = false; self.machine = nil }
            if self.list != list { self.list = .unknown }
        }
    }

    /// The list of a shopping addition (nil: the first), or not known (another kind, a
    /// summary over several lists).
    public enum ListOf: Equatable, Sendable {
        case unknown
        case on(String?)

        init(_ event: HouseholdEvent) {
            self = event.type == .shoppingAdded && event.severalLists != true ? .on(event.list) : .unknown
        }
    }

    public init(keep: Int = 20) { self.keep = keep }

    /// Folds an event of `kind` into its kind's summary, without the event being made,
    /// when the kind has one (true); false when the event is to be made and added.
    public mutating func folded(
        _ kind: HouseholdEvent.Kind, count: Int = 1, time: Int64, author: String?, machine: String?, list: ListOf = .unknown
    ) -> Bool {
        folded(kind, count: count, time: time, writer: author.map(TextID.init), machine: machine, list: list)
    }

    /// The same with the author as a change holds it.
    package mutating func folded(
        _ kind: HouseholdEvent.Kind, count: Int = 1, time: Int64, writer author: TextID?, machine: String?, list: ListOf = .unknown
    ) -> Bool {
        let index = kind.index
        guard summaries[index] != nil else { return false }
        counts[index] += 1
        summaries[index]!.fold(count: count, time: time, author: author, machine: machine, list: list)
        return true
    }

    public mutating func add(_ event: HouseholdEvent) {
        if folded(event.type, count: event.count, time: event.time, author: event.author, machine: event.machine, list: ListOf(event)) { return }
        let index = event.type.index
        counts[index] += 1
        if counts[index] <= keep {
            kept[index].append(slots.count)
            slots.append(event)
            return
        }
        // The kind's first event becomes its summary, in its place; the others fold in.
        let places = kept[index]
        kept[index] = []
        guard let first = places.first, let firstEvent = slots[first] else {
            // `keep` 0: the event itself is the summary.
            summaries[index] = Summary(place: slots.count, event)
            slots.append(event)
            return
        }
        var summary = Summary(place: first, firstEvent)
        for place in places.dropFirst() {
            if let other = slots[place] {
                summary.fold(
                    count: other.count, time: other.time, author: other.author.map(TextID.init), machine: other.machine, list: ListOf(other))
            }
            slots[place] = nil
        }
        summary.fold(count: event.count, time: event.time, author: event.author.map(TextID.init), machine: event.machine, list: ListOf(event))
        summaries[index] = summary
    }

    /// The events so far, kept or summarized.
    public var events: [HouseholdEvent] {
        var out = slots
        for case let summary? in summaries {
            guard var event = out[summary.place] else { continue }
            event.row = nil
            event.title = nil
            event.count = summary.count
            event.time = summary.time
            event.author = summary.author?.text
            if !summary.sameAuthor { event.authorName = nil }
            event.kid = nil // several kids' doings may be folded: named by no one kid
            event.machine = summary.machine
            // A summary of shopping items names their list only when it is one list, known.
            if event.entity == EntityKind.shoppingItem.rawValue {
                switch summary.list {
                case let .on(list): event.list = list
                case .unknown: event.list = nil; event.severalLists = true
                }
            }
            out[summary.place] = event
        }
        return out.compactMap { $0 }
    }
}

extension Household {
    // The events of changes (applied from a peer, or committed here) are made in two
    // halves: ``EventRules/events(of:labels:keep:)``, pure, summarizes them as it derives
    // them (a catch-up of 100 000 changes makes a few dozen events), and
    // ``filledIn(_:local:)`` reads titles and names for only those. The agent runs the
    // first off the store's actor (PeerSync's EventPipeline).

    /// The machine's name in the household when known (a rename shows at once: "Kitchen
    /// laptop", not the host name it joined under), else the replica's label.
    public func replicaLabels() throws -> [ReplicaID: String] {
        var names: [String: String] = [:]
        for row in try store.rows(.machine) where !row.text("name").isEmpty { names[row.id] = row.text("name") }
        var labels: [ReplicaID: String] = [:]
        for row in try store.rows(.replica) {
            if let replica = ReplicaID(hex: row.id) { labels[replica] = names[row.text("machine")] ?? row.text("label") }
        }
        return labels
    }

    /// Events with what the rows say now: each author's name, and the title of an event
    /// whose change did not carry one (an item checked names the item).
    public func filledIn(_ events: [HouseholdEvent], local: Bool) throws -> [HouseholdEvent] {
        guard !events.isEmpty else { return [] }
        let names = try memberNames()
        let kidNames = events.contains { $0.kid != nil } ? try kids().reduce(into: [:]) { $0[$1.id] = $1.name } : [String: String]()
        var out = events
        var lists: [String: String]? // the live lists' names by id, read at the first item on one
        for index in events.indices
        where events[index].entity == EntityKind.shoppingItem.rawValue && events[index].type != .changed
            || events[index].type == .shoppingTrip
        {
            let entity = events[index].type == .shoppingTrip ? EntityKind.shoppingTrip : .shoppingItem
            // Where a kept event's row is now; a summary's one list, as its changes said.
            let at = try events[index].row.map { try store.value(entity, $0, "list")?.textValue } ?? events[index].list
            if events[index].severalLists == true {
                // With no list but the first, every item is on it.
                if lists == nil { lists = Dictionary(try liveShoppingLists().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a }) }
                if lists?.isEmpty == true { out[index].severalLists = nil }
                continue
            }
            guard let list = at else {
                out[index].list = nil
                continue
            }
            if lists == nil { lists = Dictionary(try liveShoppingLists().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a }) }
            // A list deleted or unknown here: the item is on the first list.
            if let name = lists?[list] {
                out[index].list = list
                out[index].listName = name
            } else {
                out[index].list = nil
            }
        }
        for index in out.indices {
            out[index].local = local
            out[index].authorName = out[index].kid.flatMap { kidNames[$0] } ?? out[index].author.flatMap { names[$0] }
            guard out[index].title == nil, out[index].count == 1, let row = out[index].row,
                let entity = out[index].entity.flatMap(EntityKind.init(rawValue:))
            else { continue }
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
