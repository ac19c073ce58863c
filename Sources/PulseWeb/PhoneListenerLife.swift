import PeerSync

/// The phones' listener's life (issue 55), as a state machine returning actions (as
/// `SessionStateMachine` does for a session): turned on or off by a person, bound or not, kept
/// on while it waits for the household's CA. ``PhoneService`` carries the actions out and tells
/// it what came of them; what is decided is here, tested without sockets
/// (`PhoneListenerLifeTests`).
struct PhoneListenerLife: Sendable, Equatable {
    enum Mode: Sendable, Equatable {
        case off
        /// Asked on: its certificates and its port are being had.
        case starting
        case serving(port: Int)
        /// On, not served until the household's CA signs this computer's certificate (the
        /// choice is kept: served as soon as it comes).
        case waitingForCA
        /// Asked on, and the port could not be had (the choice is not kept).
        case cannotListen
    }

    enum Event: Sendable, Equatable {
        /// A person turned phones on or off (`phones.set`), or the household's certificates
        /// changed under a listener that is on (turned on again).
        case turn(on: Bool, port: Int?)
        /// The listener is bound, at `port` (the one given for a port 0 asked for).
        case bound(port: Int)
        case waitingForCA(Refusal)
        case cannotListen(Refusal)
        /// The choice is saved (`HOME/phones.json`).
        case saved(PhoneSettings)
    }

    enum Action: Sendable, Equatable {
        /// Close the listener served, if any.
        case closeListener
        /// Have the certificates and bind `port`; then tell `.bound`, `.waitingForCA` or `.cannotListen`.
        case bind(port: Int)
        /// Tell the household where this computer serves phones now (nowhere, when none is bound).
        case publishAddresses
        /// Save the choice; then tell `.saved` (a failure is the answer).
        case save(PhoneSettings)
        /// The answer to the person: what phones are now, or the refusal.
        case answer(Refusal?)
    }

    /// The choice as saved.
    private(set) var settings: PhoneSettings
    private(set) var mode: Mode = .off
    /// Why phones are not served although turned on (the page translates it).
    private(set) var problem: Refusal?
    /// The choice being carried out, until saved.
    private var wanted: PhoneSettings?

    init(settings: PhoneSettings) { self.settings = settings }

    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case let .turn(on, port):
            var next = settings
            if let port { next.port = port }
            next.on = on
            wanted = next
            guard on else {
                mode = .off
                problem = nil
                return [.closeListener, .publishAddresses, .save(next)]
            }
            mode = .starting
            return [.closeListener, .bind(port: next.port)]
        case let .bound(port):
            guard mode == .starting, var next = wanted else { return [] }
            next.port = port // a port 0 asked for: the one given, kept
            wanted = next
            mode = .serving(port: port)
            problem = nil
            return [.publishAddresses, .save(next)]
        case let .waitingForCA(refusal):
            guard mode == .starting, let next = wanted else { return [] }
            mode = .waitingForCA
            problem = refusal
            return [.publishAddresses, .save(next), .answer(refusal)]
        case let .cannotListen(refusal):
            guard mode == .starting else { return [] }
            mode = .cannotListen
            problem = refusal
            wanted = nil
            return [.publishAddresses, .answer(refusal)]
        case let .saved(next):
            guard next == wanted else { return [] }
            settings = next
            wanted = nil
            return mode == .waitingForCA ? [] : [.answer(nil)]
        }
    }
}
