import FoundationEssentials
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PeerSync
import PulseCalDAV
import Synchronization

/// The family's phones (issue 42): a listener on the home network, off until a person turns
/// it on (`phones.set`: the computer's page, More → Phones, or `pulse-peer phones on`). One
/// port: a TLS connection gets the phone app (the page, its API, the live stream) with a
/// certificate of the household CA (``PhoneTLS``); a plain one gets only the CA's download
/// and a redirect to `https://`. Adding a phone: ``PhonePairing``. Its methods (`phones.*`)
/// answer on this computer's control socket and loopback page only.
public struct PhoneFrontEnd: AgentFrontEnd {
    let logger: Logger
    let look: @Sendable () -> (names: [String], addresses: [String])

    public init(logger: Logger) {
        self.logger = logger
        look = PhoneTLS.thisMachine
    }

    init(logger: Logger, look: @escaping @Sendable () -> (names: [String], addresses: [String])) {
        self.logger = logger
        self.look = look
    }

    public func start(_ api: LocalAPI) async throws -> FrontEndHandle {
        if api.welcome {
            // No household: no phones. It still serves until cancelled, as every front end does
            // (the welcome ends when any of them ends).
            return FrontEndHandle(url: nil) {
                let (never, continuation) = AsyncStream<Void>.makeStream()
                defer { continuation.finish() }
                for await _ in never {}
            }
        }
        let service = PhoneService(api: api, logger: logger, look: look)
        if service.settings.on {
            let answer = await service.turn(on: true, port: nil)
            if !answer.ok { logger.warning("phones not served", metadata: ["error": "\(answer.error?.message ?? "")"]) }
        } else if service.calDAVOn {
            _ = await service.turnCalDAV(on: true, save: false)
        }
        return FrontEndHandle(url: nil, methods: service.methods.merging(service.calDAVMethods) { a, _ in a }) { await service.serve() }
    }
}

/// This computer's choice about phones (`HOME/phones.json`).
struct PhoneSettings: Codable, Equatable, Sendable {
    static let defaultPort = 47655
    static let file = "phones.json"
    var on = false
    var port = PhoneSettings.defaultPort
}

final class PhoneService: Sendable {
    /// What this agent's live feed names when a phone asks to be added or is answered
    /// (``LocalAPI/announce(entity:)``): every open page of this computer looks again.
    static let requestEntity = "phone_request"
    let api: LocalAPI
    let logger: Logger
    let look: @Sendable () -> (names: [String], addresses: [String])
    let pairing = PhonePairing()
    /// Turning phones on or off, one change at a time.
    let gate = AsyncGate()
    /// Phones identified since the last change of the household's phones (by credential),
    /// and when each was last seen here.
    let known = Mutex(Known())

    /// Phones identified, and a generation: a lookup that began before the household's phones
    /// or keys changed is not kept (it may have been true only before the change).
    struct Known {
        var sessions: [String: PhoneSession] = [:]
        var generation = 0
        mutating func forget() {
            sessions = [:]
            generation += 1
        }
    }
    let seen = Mutex<[String: Int64]>([:])
    /// CalDAV for the members' apps (issue 59), on this listener when turned on (``CalDAVSettings``:
    /// the life's `calDAV`).
    let calDAV: DAVService
    let state: Mutex<State>
    private let started: (stream: AsyncStream<PhoneListener>, continuation: AsyncStream<PhoneListener>.Continuation)

    struct State {
        var life: PhoneListenerLife
        var listener: PhoneListener?
        var tls: PhoneTLS?
    }

    init(api: LocalAPI, logger: Logger, look: @escaping @Sendable () -> (names: [String], addresses: [String])) {
        self.api = api
        self.logger = logger
        self.look = look
        let saved = api.readPrivateFile(PhoneSettings.file).flatMap { try? JSONDecoder().decode(PhoneSettings.self, from: $0) }
        let calDAVSaved = api.readPrivateFile(CalDAVSettings.file).flatMap { try? JSONDecoder().decode(CalDAVSettings.self, from: $0) }
        state = Mutex(State(life: PhoneListenerLife(settings: saved ?? PhoneSettings(), calDAV: calDAVSaved?.on ?? false)))
        calDAV = DAVService(host: api)
        started = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    var settings: PhoneSettings { state.withLock { $0.life.settings } }
    /// Phones are served here (their routes answered): ``PhoneListenerLife/phonesOn``.
    var phonesOn: Bool { state.withLock { $0.life.phonesOn } }
    /// The listener's certificates (nil until phones were turned on since the agent started).
    var tlsNow: PhoneTLS? { state.withLock { $0.tls } }

    /// Serves each listener turned on, until the agent stops; closes a phone's connections
    /// as soon as its removal is known here (made here or arriving by sync).
    func serve() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.watchRemovals() }
            group.addTask { await self.renewDaily() }
            for await listener in started.stream { group.addTask { await listener.serve() } }
            group.cancelAll()
        }
        await state.withLock { $0.listener }?.close()
    }

    private func watchRemovals() async {
        while !Task.isCancelled {
            let feed = api.subscribe(topics: [.household], resume: nil, counted: false, close: {})
            // The household CA's rows (and a machine removed: a holder may be) as they were when
            // the feed began, then as they change.
            await caChanged()
            for await event in feed.events {
                if event.count > 1 {
                    // A summary of many changes names the first one's entity only: any of them
                    // may have been a phone's removal or the CA's.
                    known.withLock { $0.forget() }
                    await closeRemovedPhones()
                    await caChanged()
                    continue
                }
                switch event.entity {
                case EntityKind.phone.rawValue:
                    known.withLock { $0.forget() }
                    if let row = event.row, let listener = state.withLock({ $0.listener }), await identifyByID(row) == nil {
                        listener.closeConnections(of: row)
                    }
                case EntityKind.caRoot.rawValue, EntityKind.caGrant.rawValue, EntityKind.machineRemoval.rawValue:
                    known.withLock { $0.forget() } // a removal makes a new roaming key
                    await caChanged()
                case EntityKind.discoveryKey.rawValue:
                    known.withLock { $0.forget() }
                default: break
                }
            }
            feed.cancel()
            // Dropped (it fell behind) or the feed ended: once more, not in a tight loop.
            try? await LoopTimer.sleep(for: .seconds(1))
        }
    }

    /// The household CA changed: sign what waits (on the holder's computer), and serve with
    /// the household's certificates when they differ from those served (a grant arrived, the
    /// root changed hands). Under the same gate as turning phones and CalDAV on and off: a
    /// person's "off" meanwhile is never undone, and one listener is bound at a time.
    func caChanged() async {
        await signRequests()
        await gate.enter()
        await serveHouseholdCertificates()
        await gate.leave()
    }

    private func serveHouseholdCertificates() async {
        await publishAddresses() // the addresses may have changed since
        guard state.withLock({ $0.life.mode != .off }) else { return }
        let served = state.withLock { $0.listener == nil ? nil : $0.tls }
        if let served {
            guard let now = try? await householdCertificates(),
                now.root != served.certificates.root || now.intermediate != served.certificates.intermediate
            else { return }
        }
        state.withLock { $0.tls = nil }
        _ = await carryOut(.renew)
    }

    /// Renews certificates near their end (the holder's signatures, this agent's request).
    private func renewDaily() async {
        while (try? await LoopTimer.sleep(for: .seconds(12 * 3600))) != nil { await caChanged() }
    }

    // MARK: On and off

    /// Turns phones on (on `port`, or the saved one) or off; saved once it is so. One at a
    /// time (a person, CalDAV's choice, the CA's changes).
    func turn(on: Bool, port: Int?) async -> ControlResponse {
        await gate.enter()
        if !on { logger.notice("phones no longer served") }
        let answer = await carryOut(.turn(on: on, port: port))
        let described = await describe()
        await gate.leave()
        return answer ?? described
    }

    /// Turns CalDAV on or off here (`save`: its choice written first, `HOME/caldav.json`); the
    /// listener is bound for it when phones are off. Answered with what CalDAV is now (a
    /// listener that cannot be had is its `problem`).
    func turnCalDAV(on: Bool, save: Bool = true) async -> ControlResponse {
        await gate.enter()
        if save {
            do {
                try api.writePrivateFile(CalDAVSettings.file, try JSONEncoder().encode(CalDAVSettings(on: on)))
            } catch {
                await gate.leave()
                return .failed(error)
            }
            logger.notice(on ? "CalDAV turned on" : "CalDAV turned off")
        }
        if let problem = await carryOut(.calDAV(on: on)), !problem.ok {
            logger.warning("CalDAV not served", metadata: ["error": "\(problem.error?.message ?? "")"])
        }
        await gate.leave()
        return describeCalDAV()
    }

    /// Carries out an event as ``PhoneListenerLife`` decides it, action by action: nil when it
    /// went as asked, else the refusal or failure to answer with.
    private func carryOut(_ event: PhoneListenerLife.Event) async -> ControlResponse? {
        var actions = state.withLock { $0.life.handle(event) }
        func tell(_ event: PhoneListenerLife.Event) { actions += state.withLock { $0.life.handle(event) } }
        while !actions.isEmpty {
            switch actions.removeFirst() {
            case .closeListener:
                await state.withLock { state -> PhoneListener? in
                    defer { state.listener = nil }
                    return state.listener
                }?.close()
            case .closeConnections:
                state.withLock { $0.listener }?.closeConnections()
            case let .bind(port):
                do {
                    let tls = try await tls()
                    let listener = try await PhoneListener.bind(port: port, service: self, tls: tls, computer: await computerName())
                    state.withLock { $0.listener = listener }
                    started.continuation.yield(listener)
                    logger.notice(
                        phonesOn ? "phones served" : "CalDAV served (phones off)", metadata: ["port": "\(listener.port)", "hosts": "\(tls.covered)"])
                    tell(.bound(port: listener.port))
                } catch let refusal as Refusal where refusal.code == .phonesWaitingForCA {
                    tell(.waitingForCA(refusal))
                } catch {
                    tell(.cannotListen(Refusal(.phonesCannotListen, ["port": .integer(Int64(port)), "reason": .string("\(error)")])))
                }
            case .publishAddresses: await publishAddresses()
            case let .save(settings):
                do {
                    try api.writePrivateFile(PhoneSettings.file, try JSONEncoder().encode(settings))
                } catch {
                    return .failed(error)
                }
                tell(.saved(settings))
            case let .answer(refusal):
                return refusal.map { .refused($0.code, $0.params) }
            }
        }
        return nil
    }

    /// This listener's certificates, under the household's CA (``householdCertificates()``).
    private func tls() async throws -> PhoneTLS {
        if let tls = state.withLock({ $0.tls }) { return tls }
        let certificates = try await householdCertificates()
        let tls = try PhoneTLS(certificates: certificates, look: look)
        state.withLock { $0.tls = tls }
        return tls
    }

    /// Where this computer's listener is reached now (its `https://` addresses; none while
    /// none is bound): phones' when they are on, CalDAV's when it is.
    func listenerURLs() -> [String] {
        let (listener, tls) = state.withLock { ($0.listener, $0.tls) }
        guard let listener, let tls else { return [] }
        let (names, addresses) = tls.covered
        // At most three addresses, then the `.local` name (a phone that resolves it finds the
        // computer wherever its address moved).
        return (addresses.prefix(3).map { $0.contains(":") ? "[\($0)]" : $0 } + names.prefix(1)).map { "https://\($0):\(listener.port)" }
    }

    /// Tells the household where this computer serves phones (a phone whose own agent does not
    /// answer uses another): written only when it changed.
    func publishAddresses() async {
        let urls = phonesOn ? listenerURLs() : []
        do {
            _ = try await api.write { try $0.setPhoneService(urls: urls) }
        } catch {
            logger.warning("cannot record where phones are served", metadata: ["error": "\(Refusal(error).body)"])
        }
    }

}

struct PhoneError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
