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
        /// A client (`watch`, a page): counted in `status`; the agent's own front ends are not.
        var counted = true
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
    /// Resumed whenever a subscriber comes (work done only for listeners waits on it).
    let subscribed = Waiters()

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
    func subscribe(
        topics: Set<HouseholdEvent.Topic>, resume: String?, counted: Bool = true, close: @escaping @Sendable () -> Void
    ) -> Subscription {
        let (stream, continuation) = AsyncStream<HouseholdEvent>.makeStream(bufferingPolicy: .bufferingOldest(Self.subscriberBuffer))
        defer { subscribed.resumeAll() }
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
                state.subscribers[id] = Subscriber(topics: topics, continuation: continuation, close: close, counted: counted)
            }
            return Subscription(id: id, token: token(state.seq), gap: gap, events: stream)
        }
    }

    /// Whether anyone listens to `topic` now (work done only for listeners can be skipped).
    func listens(to topic: HouseholdEvent.Topic) -> Bool {
        state.withLock { $0.subscribers.values.contains { $0.topics.contains(topic) } }
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

    /// Clients subscribed now (not the agent's own front ends' watchers).
    var subscriberCount: Int { state.withLock { $0.subscribers.values.filter(\.counted).count } }
}
