import PulseHousehold

/// What kind of notification an event feeds; one burst at a time per group.
public enum NotificationGroup: String, Sendable, Codable, CaseIterable {
    /// Items added to (or brought back onto) the Shopping List.
    case shopping
    /// Tasks added by others (optional, off by default, as the seed says).
    case tasks
    /// Tasks assigned to this machine's member.
    case assigned
    /// Tasks others finished (under the tasks setting).
    case done
    /// A kid's redemption, or one the ledger declined.
    case kids
    /// The parents' PIN changed, was cleared, or its reset was asked: every computer but the
    /// one it was done on is told, whatever its settings (a child who can reach two computers
    /// can reset it: the parents must hear of it).
    case pin
    /// Someone else is going shopping (issue 57): add what you need now. Each trip is told on
    /// its own, after the debounce, never held for a window (it is news of the next minutes).
    case trip
    /// A kid reported a chore a parent approves (issue 58): every computer but the one it was
    /// reported on (the parents are elsewhere), under the kids' setting.
    case approval

    /// The page's tab that shows what the group tells (where a click on it leads).
    public var tab: String {
        switch self {
        case .shopping, .trip: "shopping"
        case .tasks, .assigned, .done: "tasks"
        case .kids, .pin, .approval: "kids"
        }
    }
}

/// Which events notify this machine's person: never the author's own changes (from this
/// machine or any other of theirs: the change carries its member), never the system's,
/// and only the lists switched on here. Pure; table-tested.
public enum NotificationPolicy {
    /// `joined`: when this computer's copy of the household was made (Unix ms): what
    /// happened before it is history it catches up on, not news to its person.
    public static func group(for event: HouseholdEvent, me: String?, settings: NotificationSettings, joined: Int64? = nil) -> NotificationGroup? {
        if let joined, event.time < joined { return nil }
        // A decline is the ledger rule's verdict once machines merged (nobody authored it):
        // every machine's person hears of it.
        if event.type == .kidDeclined { return settings.kids ? .kids : nil }
        if event.type == .kidPIN { return event.local ? nil : .pin }
        // The kid reported it, whoever's computer it was on: told wherever the parents are not.
        if event.type == .kidReported { return !event.local && settings.kids ? .approval : nil }
        guard !event.local, let author = event.author, author != me else { return nil }
        switch event.type {
        case .shoppingAdded, .shoppingRestocked:
            return settings.shopping ? .shopping : nil
        case .shoppingTrip:
            return settings.shopping ? .trip : nil
        case .taskAdded:
            if let me, event.assignee == me { return settings.assigned ? .assigned : nil }
            return settings.tasks ? .tasks : nil
        case .taskAssigned:
            guard let me, event.assignee == me else { return nil }
            return settings.assigned ? .assigned : nil
        case .taskDone:
            return settings.tasks ? .done : nil
        case .kidRedeemed, .kidDeclined:
            return settings.kids ? .kids : nil
        default:
            return nil
        }
    }
}

/// One notification to show (or to show again in place of an earlier one).
public struct PendingNotification: Sendable, Equatable {
    /// This agent's number for it; `replaces` is the number of the one it replaces (the
    /// first of the same burst), which delivery maps to the service's replace-id.
    public var id: Int
    public var replaces: Int?
    public var group: NotificationGroup
    public var summary: String
    public var body: String
    /// How many events it counts (the whole burst so far).
    public var count: Int
    public var events: [HouseholdEvent]
    /// The words of its default action (a click on it opens the page on ``NotificationGroup/tab``).
    public var openLabel = "Open"
}

/// Batches events into notifications, per group, with an injectable clock (pure: the
/// caller passes `now` and calls ``tick(now:)`` at the returned wake-up time).
///
/// The rule (docs/API.md, "Notifications"):
/// - the first event of a burst is shown after a short **debounce** (2 s), counting every
///   event that arrived by then — three items added at once make one notification of 3;
/// - events after that, until the **window** (default 90 s from the burst's first event)
///   ends, are folded into **one follow-up** shown at the window's end that replaces the
///   first and counts the whole burst ("5 new items added to Shopping List");
/// - if more arrived during the window, the burst goes on with a new window from then;
///   otherwise it closes and the next event starts a new burst.
/// So a person sees one notification per burst, updated in place at most once a window. Items
/// added to different shopping lists are different news: a burst per list ("3 new items on Lidl").
public struct NotificationBatcher: Sendable {
    public static let debounceMilliseconds: Int64 = 2_000
    public static let defaultWindowSeconds = 90
    public static let windowRange = 60...120

    struct Burst {
        var events: [HouseholdEvent]
        var started: Int64
        /// Events not yet counted in a shown notification.
        var unshown: Int
        /// The notification shown for this burst (the one follow-ups replace).
        var shownID: Int?
        var wake: Int64
    }

    public var windowMilliseconds: Int64
    /// The receiving machine's words (set by the notifier before each tick: the person at
    /// this machine may choose another language meanwhile); English until set. Not decoded
    /// before a notification is made: an agent that shows none never reads a catalogue.
    public var words: MessageCatalogue? = nil
    /// A burst's group, and for shopping the list (nil: the first).
    struct BurstKey: Hashable {
        let group: NotificationGroup
        let list: String?
    }
    private var bursts: [BurstKey: Burst] = [:]
    private var nextID = 1

    public init(windowSeconds: Int = NotificationBatcher.defaultWindowSeconds) {
        windowMilliseconds = Int64(min(max(windowSeconds, Self.windowRange.lowerBound), Self.windowRange.upperBound)) * 1000
    }

    /// Events received and not yet counted in a shown notification.
    public var pendingEvents: Int { bursts.values.reduce(0) { $0 + $1.unshown } }

    /// The earliest time ``tick(now:)`` has something to do (nil: nothing pending).
    public var nextWake: Int64? { bursts.values.map(\.wake).min() }

    /// Events for `group` arrived at `now`. Shows nothing by itself (the debounce); returns
    /// notifications only if a tick was overdue.
    public mutating func receive(_ events: [HouseholdEvent], group: NotificationGroup, now: Int64) -> [PendingNotification] {
        guard !events.isEmpty else { return [] }
        let shown = tick(now: now)
        var byList: [(list: String?, events: [HouseholdEvent])] = []
        for event in events {
            let list = group == .shopping ? event.list : group == .trip ? event.row : nil // a trip: a burst of its own
            if let index = byList.firstIndex(where: { $0.list == list }) { byList[index].events.append(event) } else { byList.append((list, [event])) }
        }
        for (list, events) in byList {
            let key = BurstKey(group: group, list: list)
            if var burst = bursts[key] {
                burst.events += events
                burst.unshown += events.count
                bursts[key] = burst
            } else {
                bursts[key] = Burst(
                    events: events, started: now, unshown: events.count, shownID: nil,
                    wake: now + Self.debounceMilliseconds)
            }
        }
        return shown
    }

    /// Shows what is due at `now`.
    public mutating func tick(now: Int64) -> [PendingNotification] {
        var out: [PendingNotification] = []
        let order = { (key: BurstKey) in (NotificationGroup.allCases.firstIndex(of: key.group) ?? 0, key.list ?? "") }
        for key in bursts.keys.sorted(by: { order($0) < order($1) }) {
            let group = key.group
            guard var burst = bursts[key], burst.wake <= now else { continue }
            if burst.shownID == nil {
                // End of the debounce: the first notification of the burst.
                let id = nextID
                nextID += 1
                out.append(Self.notification(id: id, replaces: nil, group: group, events: burst.events, words: words ?? .english))
                // A change of the PIN is a warning: each is shown after the debounce, never
                // held for a window's follow-up.
                if group == .pin || group == .trip {
                    bursts[key] = nil
                    continue
                }
                burst.shownID = id
                burst.unshown = 0
                burst.wake = burst.started + windowMilliseconds
                bursts[key] = burst
            } else if burst.unshown > 0 {
                // End of the window with more events: one follow-up replacing the first.
                let id = nextID
                nextID += 1
                out.append(Self.notification(id: id, replaces: burst.shownID, group: group, events: burst.events, words: words ?? .english))
                burst.shownID = id
                burst.unshown = 0
                burst.started = now
                burst.wake = now + windowMilliseconds
                bursts[key] = burst
            } else {
                bursts[key] = nil // a quiet window: the burst is over
            }
        }
        return out
    }

    /// The words of a notification counting `events` (all of one group), in the language
    /// of `words` (the receiving machine's: never the author's).
    public static func notification(
        id: Int, replaces: Int?, group: NotificationGroup, events: [HouseholdEvent], words: MessageCatalogue = .english
    ) -> PendingNotification {
        let count = events.reduce(0) { $0 + $1.count }
        // A kids' built-in item in the reader's words; anything else as the household wrote it.
        let titles = events.compactMap { event in event.titleKey.flatMap { words.has($0) ? words.text($0) : nil } ?? event.title }
        // (An unnamed author by the end of its member id: ids made since they became time-ordered start alike.)
        let authors = ordered(events.compactMap { $0.authorName ?? $0.author.map { String($0.suffix(8)) } })
        let by = authors.isEmpty ? "" : words.text("notify.by", ["names": .string(list(authors, words))])
        let quotedTitles = titles.map { words.text("notify.quoted", ["text": .string($0)]) }
        let named =
            titles.isEmpty
            ? ""
            : (titles.count <= 3 && titles.count == count
                ? list(quotedTitles, words)
                : words.text(
                    "notify.and_more",
                    ["names": .string(quotedTitles.prefix(3).joined(separator: ", ")), "count": JSONValue(count - min(3, titles.count))]))
        var params: [String: JSONValue] = ["count": JSONValue(count), "author": authors.first.map { .string($0) } ?? .null]
        params["title"] = titles.first.map { .string($0) } ?? .null
        let key: String
        switch group {
        case .shopping:
            // Every item of the burst on one list other than the first: the list is named ("3 new items on Lidl").
            // A summary over several lists, or over lists not known, names none.
            let several = events.contains { $0.severalLists == true }
            let lists = Set(events.map { $0.listName ?? "" })
            if !several, lists.count == 1, let name = lists.first, !name.isEmpty {
                params["list"] = .string(name)
                key = count == 1 && !titles.isEmpty ? "notify.shopping.list_one" : "notify.shopping.list_many"
            } else if several || lists.count > 1 {
                key = "notify.shopping.mixed" // on several lists: none named
            } else {
                key = count == 1 && !titles.isEmpty ? "notify.shopping.one" : "notify.shopping.many"
            }
        case .tasks: key = count == 1 && !titles.isEmpty ? "notify.tasks.one" : "notify.tasks.many"
        case .assigned: key = count == 1 && !titles.isEmpty ? "notify.assigned.one" : "notify.assigned.many"
        case .done: key = count == 1 && !titles.isEmpty ? "notify.done.one" : "notify.done.many"
        case .kids:
            let declined = events.filter { $0.type == .kidDeclined }.count
            params["declined"] = JSONValue(declined)
            if count == 1 && !titles.isEmpty {
                key = declined == 1 ? "notify.kids.declined" : "notify.kids.redeemed"
            } else {
                key = declined > 0 ? "notify.kids.many_declined" : "notify.kids.many"
            }
        case .approval:
            key = count == 1 && !titles.isEmpty ? "notify.approval.one" : "notify.approval.many"
            params["kid"] = .string(events.last?.authorName ?? words.text("notify.someone"))
        case .trip:
            // "Anna is going to Lidl": the shop named, else the list other than the first, else shopping.
            let trip = events.last
            let place = trip?.title ?? trip?.listName
            key = "notify.trip"
            params["where"] = .string(place == nil ? "none" : "place")
            params["place"] = place.map { .string($0) } ?? .null
            params["author"] = (trip?.authorName ?? trip?.author.map { String($0.suffix(8)) }).map { .string($0) } ?? .null
        case .pin:
            // The latest says where the PIN stands now; what to do if it was not a parent.
            key = "notify.pin"
            params["what"] = .string(events.last?.title ?? "changed")
            params["machine"] = .string(events.last?.machine ?? words.text("notify.someone"))
        }
        if params["author"] == .null { params["author"] = .string(words.text("notify.someone")) }
        let summary = words.text(key, params)
        let body: String
        switch group {
        case .pin: body = words.text("notify.pin.body")
        case .approval: body = words.text("notify.approval.body")
        case .trip: body = words.text("notify.trip.body")
        default: body = count == 1 ? by : (named.isEmpty ? by : by.isEmpty ? named : words.text("notify.body", ["names": .string(named), "by": .string(by)]))
        }
        return PendingNotification(
            id: id, replaces: replaces, group: group, summary: summary, body: body, count: count, events: events,
            openLabel: words.text("notify.open"))
    }

    /// "A, B and C" in the language's words.
    static func list(_ items: [String], _ words: MessageCatalogue) -> String {
        switch items.count {
        case 0: return ""
        case 1: return items[0]
        default:
            return words.text("join.last", ["head": .string(items.dropLast().joined(separator: words.text("join.separator"))), "last": .string(items.last!)])
        }
    }

    static func ordered(_ items: [String]) -> [String] {
        var seen = Set<String>()
        return items.filter { seen.insert($0).inserted }
    }
}
