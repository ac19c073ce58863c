import FoundationEssentials
import Logging
import Synchronization
import PulseModel
import PulseStore
import PulseHousehold
import PulseNotify

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
                        // Data only: each reader says "3 concurrent edits resolved" in their words.
                        HouseholdEvent(type: .conflict, time: WallClock.now(), count: conflictCount))
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
                    for (id, entry) in now where !declined.contains(id) {
                        var event = HouseholdEvent(
                            type: .kidDeclined, entity: EntityKind.ledgerEntry.rawValue, row: id, title: entry.title, time: WallClock.now())
                        event.titleKey = entry.titleKey
                        events.append(event)
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
