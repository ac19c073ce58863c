import PeerSync

/// The phones' listener's life (issue 55), as a state machine returning actions (as
/// `SessionStateMachine` does for a session): turned on or off by a person, bound or not, kept
/// on while it waits for the household's CA. The listener serves phones and CalDAV (issue 59):
/// it is bound while either is on here, and with phones off it serves CalDAV alone (phones'
/// routes refused, nowhere published for phones). ``PhoneService`` carries the actions out and
/// tells it what came of them; what is decided is here, tested without sockets
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
        /// A person turned phones on or off (`phones.set`).
        case turn(on: Bool, port: Int?)
        /// CalDAV's choice, saved (`caldav.set`, or as the agent starts): the listener is wanted
        /// for it too.
        case calDAV(on: Bool)
        /// The household's certificates changed: a listener that is wanted is bound again.
        case renew
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
        /// Close the listener's connections, the listener kept (phones turned off while CalDAV
        /// keeps it: a phone's open page or live stream ends now).
        case closeConnections
        /// Have the certificates and bind `port`; then tell `.bound`, `.waitingForCA` or `.cannotListen`.
        case bind(port: Int)
        /// Tell the household where this computer serves phones now (nowhere, when none is bound
        /// or phones are off: ``phonesOn``).
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
    /// CalDAV's choice, saved.
    private(set) var calDAV: Bool

    init(settings: PhoneSettings, calDAV: Bool = false) {
        self.settings = settings
        self.calDAV = calDAV
    }

    /// Phones are served (their routes answered, their addresses published): the choice being
    /// carried out, else the one saved.
    var phonesOn: Bool { (wanted ?? settings).on }

    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case let .turn(on, port):
            var next = settings
            if let port { next.port = port }
            next.on = on
            wanted = next
            guard on else {
                guard calDAV, mode != .off else {
                    mode = .off
                    problem = nil
                    return [.closeListener, .publishAddresses, .save(next)]
                }
                // CalDAV keeps the listener: the phones' connections end, nothing published.
                return [.closeConnections, .publishAddresses, .save(next)]
            }
            mode = .starting
            return [.closeListener, .bind(port: next.port)]
        case let .calDAV(on):
            calDAV = on
            if on {
                guard mode == .off || mode == .cannotListen else { return [.answer(nil)] }
                wanted = settings
                mode = .starting
                return [.closeListener, .bind(port: settings.port)]
            }
            guard !phonesOn, mode != .off else { return [.answer(nil)] }
            mode = .off
            problem = nil
            return [.closeListener, .publishAddresses, .answer(nil)]
        case .renew:
            guard mode != .off, phonesOn || calDAV else { return [] }
            wanted = wanted ?? settings
            mode = .starting
            return [.closeListener, .bind(port: (wanted ?? settings).port)]
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
