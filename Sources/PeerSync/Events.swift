import FoundationEssentials
import Logging
import Synchronization
import PulseModel
import PulseStore
import PulseHousehold
import PulseNotify

/// The live change feed of the local API (`{"op":"subscribe"}`, docs/API.md): the last
/// ``capacity`` events in memory, each with a resume token, and the subscribers.
///
/// Backpressure: each subscriber has a buffer of ``subscriberBuffer`` events; one that does
/// not read fills it and is disconnected (its `close` is called) — publishing never waits.
final class EventFeed: Sendable {
    static let capacity = 1024
    static let subscriberBuffer = 256

    struct Subscriber {
        let topics: Set<HouseholdEvent.Topic>
        let continuation: AsyncStream<HouseholdEvent>.Continuation
        let close: @Sendable () -> Void
    }

    private struct State {
        var seq: UInt64 = 0
        var recent: [HouseholdEvent] = [] // ring, oldest first
        var subscribers: [Int: Subscriber] = [:]
        var nextSubscriber = 0
        var finished = false
    }

    /// Tokens are `<run>-<seq>`: `run` names this start of the agent (the ring is memory
    /// only), so a token from an earlier run is recognised as one that cannot be resumed.
    let run: String
    private let state = Mutex(State())

    init() {
        run = String((0..<4).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined())
    }

    func token(_ seq: UInt64) -> String { "\(run)-\(seq)" }

    /// Gives each event its token, keeps it, and hands it to the subscribers of its topic.
    func publish(_ events: [HouseholdEvent]) {
        guard !events.isEmpty else { return }
        var overflowed: [@Sendable () -> Void] = []
        state.withLock { state in
            for var event in events {
                state.seq += 1
                event.token = token(state.seq)
                state.recent.append(event)
                for (id, subscriber) in state.subscribers where subscriber.topics.contains(event.topic) {
                    if case .dropped = subscriber.continuation.yield(event) {
                        subscriber.continuation.finish()
                        overflowed.append(subscriber.close)
                        state.subscribers[id] = nil
                    }
                }
            }
            if state.recent.count > Self.capacity { state.recent.removeFirst(state.recent.count - Self.capacity) }
        }
        for close in overflowed { close() }
    }

    struct Subscription {
        let id: Int
        /// The token of the newest event now (a client that keeps it resumes from here).
        let token: String
        /// True when `resume` could not be honoured (a token of another run, or older than
        /// the ring): the client missed events and should reload what it shows.
        let gap: Bool
        let events: AsyncStream<HouseholdEvent>
    }

    /// Subscribes to `topics`; with `resume`, the events after it come first (from the same
    /// lock, so none is lost or doubled between the missed and the live ones).
    func subscribe(topics: Set<HouseholdEvent.Topic>, resume: String?, close: @escaping @Sendable () -> Void) -> Subscription {
        let (stream, continuation) = AsyncStream<HouseholdEvent>.makeStream(bufferingPolicy: .bufferingOldest(Self.subscriberBuffer))
        return state.withLock { state in
            var gap = false
            if let resume {
                let parts = resume.split(separator: "-")
                if parts.count == 2, parts[0] == run, let after = UInt64(parts[1]), after <= state.seq {
                    let oldest = state.seq - UInt64(state.recent.count) // the seq before the ring's first
                    if after < oldest { gap = true }
                    let missed = state.recent.suffix(Int(state.seq - max(after, oldest))).filter { topics.contains($0.topic) }
                    if missed.count > Self.subscriberBuffer { gap = true }
                    for event in missed.suffix(Self.subscriberBuffer) { continuation.yield(event) }
                } else {
                    gap = true
                }
            }
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            if state.finished {
                continuation.finish()
            } else {
                state.subscribers[id] = Subscriber(topics: topics, continuation: continuation, close: close)
            }
            return Subscription(id: id, token: token(state.seq), gap: gap, events: stream)
        }
    }

    func unsubscribe(_ id: Int) {
        let subscriber = state.withLock { $0.subscribers.removeValue(forKey: id) }
        subscriber?.continuation.finish()
    }

    /// The agent stops: every stream ends (each `watch` sees the end and says so).
    func finishAll() {
        let all = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in all { subscriber.continuation.finish() }
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }
}

/// Turns what happens into events, off the sync path: sessions and control requests hand
/// over changes without waiting (``applied(_:)``, ``localChanged()``), one worker derives
/// the events (titles and names from the store), publishes them to the feed and hands them
/// to the notifier. Whatever piled up while it worked is taken in one go, so a catch-up's
/// many batches are summarized together.
actor EventPipeline {
    private let store: StoreService
    private let feed: EventFeed
    private let notifier: Notifier
    private let logger: Logger
    /// The changes of each batch applied since the worker last ran (the batches' own
    /// arrays, shared, not copied into one).
    private var remote: [[Change]] = []
    private var remoteLedger = false
    private var conflicts = 0
    private var peerEvents: [HouseholdEvent] = []
    private var localDirty = false
    private var localSeq: UInt64
    /// Ledger entries declined so far (a decline is the rule's verdict once every machine's
    /// entries merged, not a change: it is found by comparing after ledger changes).
    private var declined: Set<String>
    private let wake = Waiters()

    init(store: StoreService, feed: EventFeed, notifier: Notifier, logger: Logger) async throws {
        self.store = store
        self.feed = feed
        self.notifier = notifier
        self.logger = logger
        localSeq = try await store.versionVector()[store.replicaID]
        declined = Set(try await store.declinedLedgerEntries().keys)
    }

    /// The database continued as a new replica (it went back in time): this machine's own
    /// changes are numbered anew, after `localSeq` (the re-issued ones are no news).
    func replicaRestarted(localSeq: UInt64) {
        self.localSeq = localSeq
    }

    /// A peer's batch (or changes held for a clock ahead) was committed. Only appends: the
    /// session does not wait for the events to be derived.
    func applied(_ outcome: ApplyOutcome) {
        guard !outcome.applied.isEmpty || outcome.conflicts > 0 else { return }
        remote.append(outcome.applied)
        remoteLedger = remoteLedger || Self.touchesLedger(outcome.applied)
        conflicts += outcome.conflicts
        wake.resumeAll()
    }

    /// Something was committed here (a control call, or the CLI said `changed`).
    func localChanged() {
        localDirty = true
        wake.resumeAll()
    }

    func peer(_ kind: HouseholdEvent.Kind, machine: String) {
        peerEvents.append(HouseholdEvent(type: kind, title: machine, machine: machine, time: WallClock.now()))
        wake.resumeAll()
    }

    /// The pure derivation, run off this actor as well as off the store's: a catch-up's
    /// takes milliseconds, and sessions hand their applied batches to this actor meanwhile
    /// (``applied(_:)`` must not wait for it).
    @concurrent private static func derive(_ batches: [[Change]], labels: [ReplicaID: String]) async -> [HouseholdEvent] {
        EventRules.events(of: batches, labels: labels)
    }

    private static func touchesLedger(_ changes: [Change]) -> Bool {
        changes.indices.contains { changes[$0].entity == .ledgerEntry } // read in place, not copied
    }

    func run() async {
        while !Task.isCancelled {
            let ticket = wake.register()
            if remote.isEmpty && !localDirty && peerEvents.isEmpty && conflicts == 0 {
                await wake.wait(ticket)
                continue
            }
            let (batches, conflictCount, peers, local, ledger) = (remote, conflicts, peerEvents, localDirty, remoteLedger)
            remote = []
            remoteLedger = false
            conflicts = 0
            peerEvents = []
            localDirty = false
            do {
                var events = peers
                // Derived off the store's actor (and this one: ``derive``): only the labels
                // and the filling in are the store's work (deriving a catch-up's 100 000
                // changes there kept the actor that applies the next batches busy for a
                // fifth of its time).
                if !batches.isEmpty {
                    let labels = try await store.replicaLabels()
                    events += try await store.filledIn(await Self.derive(batches, labels: labels), local: false)
                }
                if conflictCount > 0 {
                    events.append(
                        HouseholdEvent(
                            type: .conflict, title: "\(conflictCount) concurrent edit\(conflictCount == 1 ? "" : "s") resolved",
                            time: WallClock.now(), count: conflictCount))
                }
                var ledgerTouched = ledger
                if local {
                    let (mine, upTo) = try await store.localChanges(after: localSeq)
                    localSeq = upTo
                    if !mine.isEmpty {
                        let labels = try await store.replicaLabels()
                        events += try await store.filledIn(await Self.derive([mine], labels: labels), local: true)
                    }
                    ledgerTouched = ledgerTouched || Self.touchesLedger(mine)
                }
                if ledgerTouched {
                    let now = try await store.declinedLedgerEntries()
                    for (id, title) in now where !declined.contains(id) {
                        events.append(
                            HouseholdEvent(
                                type: .kidDeclined, entity: EntityKind.ledgerEntry.rawValue, row: id,
                                title: title, time: WallClock.now()))
                    }
                    declined = Set(now.keys)
                }
                // The notifier first: once a feed subscriber sees an event, it has been judged.
                await notifier.receive(events)
                feed.publish(events)
            } catch {
                logger.warning("cannot describe changes as events", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// Shows notifications for this machine's person: the policy picks the events, the batcher
/// folds them, the desktop service and the hook deliver. Its timer runs only while a burst
/// is open (an idle agent has nothing to wake for).
actor Notifier {
    private var batcher = NotificationBatcher()
    private let store: StoreService
    private let desktop: DesktopNotifier?
    private let hook: HookNotifier?
    private let logger: Logger
    private let wake = Waiters()
    /// The last problem logged per channel (each logged once until it changes).
    private var reported: [String: String] = [:]
    /// Notifications due, for ``run()`` to deliver.
    private var outbox: [PendingNotification] = []

    init(store: StoreService, desktop: DesktopNotifier?, hook: HookNotifier?, logger: Logger) {
        self.store = store
        self.desktop = desktop
        self.hook = hook
        self.logger = logger
    }

    private(set) var status = AgentStatus.Notifications()

    func currentStatus() -> AgentStatus.Notifications {
        var status = self.status
        status.pendingEvents = batcher.pendingEvents + outbox.reduce(0) { $0 + $1.events.count }
        return status
    }

    func receive(_ events: [HouseholdEvent]) async {
        status.judgedEvents += events.count
        guard !events.isEmpty, desktop != nil || hook != nil else { return }
        let (me, settings): (String?, NotificationSettings)
        do { (me, settings) = try await store.notificationContext() } catch {
            logger.warning("cannot read the notification settings", metadata: ["error": "\(error)"])
            return
        }
        batcher.windowMilliseconds = Int64(settings.windowSeconds) * 1000
        var groups: [NotificationGroup: [HouseholdEvent]] = [:]
        for event in events {
            if let group = NotificationPolicy.group(for: event, me: me, settings: settings) { groups[group, default: []].append(event) }
        }
        guard !groups.isEmpty else { return }
        for group in NotificationGroup.allCases {
            if let events = groups[group] { outbox += batcher.receive(events, group: group, now: WallClock.now()) }
        }
        wake.resumeAll()
    }

    /// Delivery happens here, never in ``receive(_:)``: a slow hook or D-Bus call delays
    /// notifications, not the events' way to the feed.
    func run() async {
        while !Task.isCancelled {
            if !outbox.isEmpty {
                let due = outbox
                outbox = []
                await deliver(due)
                continue
            }
            let ticket = wake.register()
            guard let next = batcher.nextWake else {
                await wake.wait(ticket)
                continue
            }
            let delay = next - WallClock.now()
            if delay > 0 {
                let wake = self.wake
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await wake.wait(ticket) }
                    group.addTask { try? await LoopTimer.sleep(for: .milliseconds(delay)) }
                    await group.next()
                    group.cancelAll()
                }
            }
            outbox += batcher.tick(now: WallClock.now())
        }
    }

    private func deliver(_ notifications: [PendingNotification]) async {
        for notification in notifications {
            status.shown += 1
            logger.info(
                "notification",
                metadata: [
                    "summary": "\(notification.summary)", "count": "\(notification.count)",
                    "replaces": "\(notification.replaces.map(String.init) ?? "-")",
                ])
            if let desktop { report("desktop", await desktop.show(notification)?.description) }
            if let hook { report("hook", await hook.run(notification)) }
        }
    }

    private func report(_ channel: String, _ problem: String?) {
        if channel == "desktop" { status.desktopProblem = problem } else { status.hookProblem = problem }
        guard reported[channel] != problem else { return }
        reported[channel] = problem
        if let problem {
            logger.notice(
                "\(channel == "desktop" ? "desktop notifications unavailable" : "notification hook failed")",
                metadata: ["reason": "\(problem)"])
        } else {
            logger.info("\(channel == "desktop" ? "desktop notifications" : "notification hook") working again")
        }
    }
}
