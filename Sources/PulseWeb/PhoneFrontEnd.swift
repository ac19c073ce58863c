import FoundationEssentials
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PeerSync
import PulseCA
import PulseQR
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
        }
        return FrontEndHandle(url: nil, methods: service.methods) { await service.serve() }
    }
}

/// This computer's choice about phones (`HOME/phones.json`).
struct PhoneSettings: Codable, Equatable, Sendable {
    static let defaultPort = 47655
    static let file = "phones.json"
    var on = false
    var port = PhoneSettings.defaultPort
}

/// A signed-in phone, as a request's cookie names it.
struct PhoneSession: Sendable, Equatable {
    let id: String
    /// Its member's id (nil: nobody in particular): what its writes are signed with.
    let member: String?
    /// The token its writes carry (`X-Pulse-CSRF`), derived from the cookie.
    let csrf: String
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
    private let known = Mutex(Known())

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
    private let seen = Mutex<[String: Int64]>([:])
    private let state: Mutex<State>
    private let started: (stream: AsyncStream<PhoneListener>, continuation: AsyncStream<PhoneListener>.Continuation)

    private struct State {
        var settings: PhoneSettings
        var listener: PhoneListener?
        var tls: PhoneTLS?
        /// Why phones are not served although turned on (a refusal: the page translates it).
        var problem: ErrorBody?
    }

    init(api: LocalAPI, logger: Logger, look: @escaping @Sendable () -> (names: [String], addresses: [String])) {
        self.api = api
        self.logger = logger
        self.look = look
        let saved = api.readPrivateFile(PhoneSettings.file).flatMap { try? JSONDecoder().decode(PhoneSettings.self, from: $0) }
        state = Mutex(State(settings: saved ?? PhoneSettings()))
        started = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    var settings: PhoneSettings { state.withLock { $0.settings } }
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
        state.withLock { $0.listener }?.close()
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
    /// root changed hands). Under the same gate as turning phones on and off: a person's "off"
    /// meanwhile is never undone, and one listener is bound at a time.
    func caChanged() async {
        await signRequests()
        await gate.enter()
        await serveHouseholdCertificates()
        await gate.leave()
    }

    private func serveHouseholdCertificates() async {
        await publishAddresses() // the addresses may have changed since
        guard settings.on else { return }
        let served = state.withLock { $0.listener == nil ? nil : $0.tls }
        if let served {
            guard let now = try? await householdCertificates(),
                now.root != served.certificates.root || now.intermediate != served.certificates.intermediate
            else { return }
        }
        state.withLock { $0.tls = nil }
        _ = await turnNow(on: true, port: nil)
    }

    /// Renews certificates near their end (the holder's signatures, this agent's request).
    private func renewDaily() async {
        while (try? await LoopTimer.sleep(for: .seconds(12 * 3600))) != nil { await caChanged() }
    }

    // MARK: Phones' sessions (replicated rows: any agent can check them)

    static func credential(_ cookie: String) -> String { WebSessions.hex(WebSessions.digest(cookie)) }

    /// The phone whose session cookie is `cookie`, when it is one of the household's and not removed.
    func identify(_ cookie: String?) async -> PhoneSession? {
        guard let cookie, !cookie.isEmpty, cookie.utf8.count <= 128 else { return nil }
        let credential = Self.credential(cookie)
        return await lookUp(credential, csrf: WebSessions.hex(WebSessions.digest("csrf:" + cookie))) { try $0.phone(credential: credential) }
    }

    /// The phone whose roaming credential is `bearer` (it uses this agent from another agent's
    /// address), when valid now and not removed. No CSRF token: a bearer credential is never
    /// sent by the browser on its own.
    func identify(roaming bearer: String) async -> PhoneSession? {
        guard bearer.utf8.count <= 200 else { return nil }
        return await lookUp("roaming:" + Self.credential(bearer), csrf: "") { try $0.phone(roaming: bearer) }
    }

    /// The phone `find` finds (by credential or roaming credential, not removed), kept under
    /// `key` until the household's phones or keys change (a lookup begun before a change is not
    /// kept), and marked seen now.
    private func lookUp(_ key: String, csrf: String, _ find: @escaping @Sendable (Household) throws -> PhoneRecord?) async -> PhoneSession? {
        let (cached, generation) = known.withLock { ($0.sessions[key], $0.generation) }
        var session = cached
        if session == nil {
            guard let phone = try? await api.read(find) else { return nil }
            let found = PhoneSession(id: phone.id, member: phone.memberID, csrf: csrf)
            known.withLock { if $0.generation == generation { $0.sessions[key] = found } }
            session = found
        }
        if let id = session?.id { seen.withLock { $0[id] = WallClock.now() } }
        return session
    }

    /// Closes the connections of every removed phone.
    private func closeRemovedPhones() async {
        guard let listener = state.withLock({ $0.listener }) else { return }
        guard let phones = try? await api.read({ try $0.phones() }) else { return }
        for phone in phones where phone.removed != nil { listener.closeConnections(of: phone.id) }
    }

    /// Phone `phone`'s roaming credential now.
    func roaming(_ phone: PhoneSession) async -> String? {
        let id = phone.id
        return try? await api.read { try $0.phoneRoaming(id) }
    }

    /// Where the household's agents serve phones: `[{machine, name, urls, self}]`.
    func agents() async -> JSONValue {
        guard let services = try? await api.read({ try $0.phoneServices() }) else { return .array([]) }
        return .array(
            services.filter { !$0.urls.isEmpty }.map { service in
                .object([
                    "machine": .string(service.machine), "name": service.name.map(JSONValue.string) ?? .null, "urls": JSONValue(service.urls),
                    "self": .bool(service.isThisMachine),
                ])
            })
    }

    /// Whether phone `id` may still sign in (nil: removed or unknown).
    private func identifyByID(_ id: String) async -> String? {
        guard let phones = try? await api.read({ try $0.phones() }), let phone = phones.first(where: { $0.id == id }) else { return nil }
        return phone.removed == nil ? id : nil
    }

    var methods: [String: FrontEndMethod] {
        [
            "phones.get": FrontEndMethod { _ in await self.describe() },
            "phones.set": FrontEndMethod { params in
                guard case let .bool(on)? = params["on"] else {
                    return .refused(.missingParameter, ["method": "phones.set", "key": "on", "type": "boolean"])
                }
                var port: Int?
                if let value = params["port"] {
                    guard let number = value.integerValue, number == 0 || (1024...65535).contains(number) else {
                        return .refused(.phonesPort, ["min": 1024, "max": 65535])
                    }
                    port = Int(number)
                }
                return await self.turn(on: on, port: port)
            },
            "phones.invite": FrontEndMethod { params in await self.invite(params) },
            "phones.approve": FrontEndMethod { params in await self.answer(params, approve: true) },
            "phones.decline": FrontEndMethod { params in await self.answer(params, approve: false) },
            "phones.remove": FrontEndMethod { params in await self.remove(params) },
        ]
    }

    // MARK: On and off

    /// Turns the listener on (on `port`, or the saved one) or off; saved once it is so. One at a
    /// time (a person, the CA's changes).
    func turn(on: Bool, port: Int?) async -> ControlResponse {
        await gate.enter()
        let answer = await turnNow(on: on, port: port)
        await gate.leave()
        return answer
    }

    private func turnNow(on: Bool, port: Int?) async -> ControlResponse {
        var settings = self.settings
        if let port { settings.port = port }
        settings.on = on
        let previous = state.withLock { state -> PhoneListener? in
            defer { state.listener = nil }
            return state.listener
        }
        previous?.close()
        if on {
            do {
                let tls = try await tls()
                let listener = try await PhoneListener.bind(port: settings.port, service: self, tls: tls, computer: await computerName())
                state.withLock {
                    $0.listener = listener
                    $0.problem = nil
                }
                settings.port = listener.port // a port 0 asked for: the one given, kept
                started.continuation.yield(listener)
                logger.notice("phones served", metadata: ["port": "\(listener.port)", "hosts": "\(tls.covered)"])
            } catch let refusal as Refusal where refusal.code == .phonesWaitingForCA {
                // Kept on: served as soon as the household's CA signs this computer's certificate.
                state.withLock { $0.problem = refusal.body }
                try? api.writePrivateFile(PhoneSettings.file, try JSONEncoder().encode(settings))
                state.withLock { $0.settings = settings }
                return .refused(refusal.code, refusal.params)
            } catch {
                let refusal = Refusal(.phonesCannotListen, ["port": .integer(Int64(settings.port)), "reason": .string("\(error)")])
                state.withLock { $0.problem = refusal.body }
                return .refused(refusal.code, refusal.params)
            }
        } else {
            logger.notice("phones no longer served")
            state.withLock { $0.problem = nil }
        }
        await publishAddresses()
        do {
            try api.writePrivateFile(PhoneSettings.file, try JSONEncoder().encode(settings))
        } catch {
            return .failed(error)
        }
        state.withLock { $0.settings = settings }
        return await describe()
    }

    /// This listener's certificates, under the household's CA (``householdCertificates()``).
    private func tls() async throws -> PhoneTLS {
        if let tls = state.withLock({ $0.tls }) { return tls }
        let certificates = try await householdCertificates()
        let tls = try PhoneTLS(certificates: certificates, look: look)
        state.withLock { $0.tls = tls }
        return tls
    }

    /// Where this computer serves phones now (its `https://` addresses; none while off).
    func servedURLs() -> [String] {
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
        let urls = servedURLs()
        do {
            _ = try await api.write { try $0.setPhoneService(urls: urls) }
        } catch {
            logger.warning("cannot record where phones are served", metadata: ["error": "\(Refusal(error).body)"])
        }
    }

    /// This computer's name in the household (as people named it), if it has one.
    func computerName() async -> String? {
        try? await api.read { try $0.machines().first(where: \.isThisMachine)?.name }
    }

    struct Summary {
        let id: String
        let name: String
    }

    func householdSummary() async throws -> Summary {
        try await api.read { Summary(id: $0.householdID, name: try $0.householdName()) }
    }

    // MARK: What the computer's page shows

    func describe() async -> ControlResponse {
        let (settings, listener, tls, problem) = state.withLock { ($0.settings, $0.listener, $0.tls, $0.problem) }
        // The port served once bound (a port 0 asked for is saved a moment later, after the
        // household was told the addresses: never "port 0" beside a fingerprint).
        var result: [String: JSONValue] = ["on": .bool(settings.on), "port": .integer(Int64(listener?.port ?? settings.port))]
        result["problem"] = problem.map { .object(["code": .string($0.code), "params": .object($0.params), "message": .string($0.message)]) } ?? .null
        if let listener, let tls {
            let (names, addresses) = tls.covered
            let hosts = names + addresses.map { $0.contains(":") ? "[\($0)]" : $0 }
            result["addresses"] = .array(hosts.map { .string("https://\($0):\(listener.port)") })
            result["hosts"] = JSONValue(names + addresses) // the first is the links' default
            result["fingerprint"] = (try? HouseholdCA.certificateFingerprint(tls.certificates.root)).map(JSONValue.string) ?? .null
        }
        // The household's phones (replicated: every computer lists and may remove them),
        // with when this computer last saw each.
        let seen = self.seen.withLock { $0 }
        let phones = (try? await api.read { try $0.phones() }) ?? []
        result["phones"] = .array(
            phones.map { phone in
                guard case var .object(fields) = try? JSONValue.from(phone) else { return .null }
                fields["lastSeen"] = seen[phone.id].map { .integer($0) } ?? .null
                return .object(fields)
            })
        result["requests"] = .array(
            pairing.pending().map { request in
                .object([
                    "id": .string(request.id), "name": .string(request.name), "member": request.member.map(JSONValue.string) ?? .null,
                    "address": .string(request.address), "asked": .integer(request.asked), "code": .string(request.code),
                ])
            })
        result["invitationExpires"] = pairing.invitationExpires().map { .integer($0) } ?? .null
        return ControlResponse(ok: true, result: .object(result))
    }

    /// "Add a phone": the two links and their QR codes (the CA's download over plain HTTP; the
    /// pairing link, with the token, over HTTPS only), the fingerprint to compare.
    func invite(_ params: [String: JSONValue]) async -> ControlResponse {
        guard case let .string(rawName)? = params["name"] else {
            return .refused(.missingParameter, ["method": "phones.invite", "key": "name", "type": "string"])
        }
        let name = String(rawName.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !name.isEmpty else { return .refused(.empty, ["field": "name"]) }
        guard name.count <= 100 else { return .refused(.tooLong, ["field": "name", "max": 100]) }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return .refused(.controlCharacters, ["field": "name"])
        }
        var member: String?
        switch params["member"] {
        case nil, .null?: member = nil
        case let .string(value)?:
            // Whose phone: a member of the household now (its id kept), or the invitation is refused.
            do {
                member = try await api.read { try $0.resolveMember(value).id }
            } catch {
                return .failed(error)
            }
        default: return .refused(.wrongType, ["key": "member", "type": "string"])
        }
        guard let (listener, tls) = state.withLock({ state in state.listener.flatMap { l in state.tls.map { (l, $0) } } }) else {
            return .refused(.phonesOff)
        }
        // The host in the links: this computer's `.local` name, which stays when the home
        // network gives the computer a new address (the app installed from it keeps working:
        // issue 51; iOS and Android 12+ resolve it), else the first home-network address;
        // `host` picks another (an address, for a phone that cannot resolve `.local` names).
        let (names, addresses) = tls.covered
        var host = names.first ?? addresses.first ?? ""
        if case let .string(chosen)? = params["host"] {
            guard names.contains(chosen) || addresses.contains(chosen) else {
                return .refused(.phonesHost, ["host": .string(chosen), "hosts": JSONValue(names + addresses)])
            }
            host = chosen
        }
        guard !host.isEmpty else { return .refused(.phonesHost, ["host": "", "hosts": JSONValue(names + addresses)]) }
        let authority = host.contains(":") ? "[\(host)]:\(listener.port)" : "\(host):\(listener.port)"
        let (token, expires) = pairing.invite(name: name, member: member)
        let setup = "http://\(authority)/ca"
        let pair = "https://\(authority)/pair?token=\(token)"
        do {
            return ControlResponse(
                ok: true,
                result: .object([
                    "setup": .string(setup), "pair": .string(pair), "expires": .integer(expires),
                    "fingerprint": .string(try HouseholdCA.certificateFingerprint(tls.certificates.root)),
                    "setupQR": .string(try QRCode(setup).svg()), "pairQR": .string(try QRCode(pair).svg()),
                ]))
        } catch {
            return .failed(error)
        }
    }

    /// Approves a waiting phone (the household's `phone` row is written first: the phone is a
    /// member of the household's list before it gets its cookie) or declines it.
    private func answer(_ params: [String: JSONValue], approve: Bool) async -> ControlResponse {
        guard case let .string(id)? = params["id"] else {
            return .refused(.missingParameter, ["method": approve ? "phones.approve" : "phones.decline", "key": "id", "type": "string"])
        }
        guard let request = pairing.pending().first(where: { $0.id == id }) else {
            return .refused(.noSuchRequest, ["id": .string(String(id.prefix(64)))])
        }
        var answer = PhonePairing.Answer.declined
        var phoneID: String?
        if approve {
            let cookie = RandomToken.make()
            let credential = Self.credential(cookie)
            do {
                phoneID = try await api.write { try $0.addPhone(name: request.name, member: request.member, credential: credential).id }
            } catch {
                return .failed(error)
            }
            answer = .approved(cookie: cookie)
        }
        guard pairing.settle(id, answer) else {
            // Answered meanwhile (another page, the CLI): the phone row just written goes again.
            if let phoneID { _ = try? await api.write { try $0.removePhone(phoneID) } }
            return .refused(.noSuchRequest, ["id": .string(String(id.prefix(64)))])
        }
        logger.notice(approve ? "phone added" : "phone declined", metadata: ["request": "\(id)"])
        api.announce(entity: Self.requestEntity) // the other open pages stop asking
        return ControlResponse(ok: true, result: .object(["id": .string(id), "approved": .bool(approve)]))
    }

    /// Removes a phone for good, on every computer (a replicated write): refused here at once,
    /// its open connections closed now, and elsewhere as the removal arrives.
    func remove(_ params: [String: JSONValue]) async -> ControlResponse {
        guard case let .string(id)? = params["id"] else {
            return .refused(.missingParameter, ["method": "phones.remove", "key": "id", "type": "string"])
        }
        do {
            _ = try await api.write { try $0.removePhone(id) }
        } catch {
            return .failed(error)
        }
        known.withLock { $0.forget() }
        state.withLock { $0.listener }?.closeConnections(of: id)
        logger.notice("phone removed", metadata: ["phone": "\(id)"])
        return ControlResponse(ok: true, result: .object(["id": .string(id), "removed": .bool(true)]))
    }

    /// A new session cookie for `phone` (its old one expired unused: the way back, proven by
    /// its roaming credential); nil when the household refused (the phone was removed).
    func renew(_ phone: PhoneSession) async -> String? {
        let cookie = RandomToken.make()
        let (id, credential) = (phone.id, Self.credential(cookie))
        guard (try? await api.write { try $0.renewPhone(id, credential: credential) }) != nil else { return nil }
        known.withLock { $0.forget() }
        logger.notice("phone signed in again", metadata: ["phone": "\(phone.id)"])
        return cookie
    }
}

struct PhoneError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
