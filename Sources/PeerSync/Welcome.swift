import FoundationEssentials
import Logging
import PulseHousehold
import PulseModel
import PulseProtocol
import ServiceLifecycle
import Synchronization

/// `pulse-peer run` on a computer with no household yet: instead of refusing, it serves the
/// page's welcome — start a household, or join one with a code from another computer — and
/// the control socket's sign-in (`pulse-peer open`), nothing else (no peer listener, no
/// discovery: there is nothing to sync). It returns once the home holds a household; the
/// caller then runs the agent (``PeerAgent``) on it, serving the page where it was.
public struct WelcomeAgent: Sendable {
    let options: AgentOptions
    let logger: Logger
    let onServing: @Sendable (String?) -> Void

    /// The page's methods while there is no household (``declared``).
    public static var methods: [String] { declared.keys.sorted() }

    /// `onServing` gets the page's address once it is served (nil: the page could not listen).
    public init(options: AgentOptions, logger: Logger, onServing: @escaping @Sendable (String?) -> Void) {
        self.options = options
        self.logger = logger
        self.onServing = onServing
    }

    /// What the welcome did: whether the home holds a household now (false: stopped before),
    /// and the address its page was served on.
    public struct Outcome: Sendable {
        public let household: Bool
        public let web: String?
        /// The address a join was told (the other computer was not found over mDNS): the
        /// agent keeps it as a static peer, or it would not find that computer either.
        public let peer: PeerAddress?
    }

    public func run() async throws -> Outcome {
        let home = options.home
        if let problem = home.problem { throw HouseholdError.refused(problem) }
        try Directories.make(home.path, mode: 0o700)
        let lock = try HomeLock(home: home)
        defer { withExtendedLifetime(lock) {} }
        let logins = FrontEndLogins()
        let finished = AsyncStream<Void>.makeStream()
        let busy = Mutex(false)
        let joinedAt = Mutex<PeerAddress?>(nil)
        let logger = self.logger
        let api = LocalAPI(
            callMethod: { method, params, _ in
                // One start or join at a time; none once the home holds a household.
                guard
                    busy.withLock({ was in
                        defer { was = true }; return !was
                    })
                else {
                    return .refused(home.hasHousehold ? .householdExists : .welcomeBusy, ["path": .string(home.path)])
                }
                let answer = await Self.call(method, params, home: home, logger: logger) { peer in joinedAt.withLock { $0 = peer } }
                if answer.ok {
                    // The welcome ends once this answer had a moment to reach the page (which
                    // also copes with losing it: it asks the agent again until the household's
                    // page answers).
                    Task {
                        try? await Task.sleep(for: .milliseconds(300))
                        finished.continuation.yield()
                    }
                } else {
                    busy.withLock { $0 = false }
                }
                return answer
            },
            inviteMethod: { _, _ in .refused(.noHousehold, ["path": .string(home.path)]) },
            currentStatus: { throw HouseholdError.notInitialized(home.path) }, feed: EventFeed(), logins: logins,
            home: home, welcome: true)
        var handles: [FrontEndHandle] = []
        for frontEnd in options.frontEnds {
            let handle = try await frontEnd.start(api)
            if let problem = handle.problem { logger.warning("front end not serving", metadata: ["reason": "\(problem)"]) }
            handles.append(handle)
        }
        let web = handles.compactMap(\.url).first
        let socketPath = AgentControl.socketPath(home)
        let control = try await ControlServer.bind(path: socketPath)
        defer { try? FileManager.default.removeItem(atPath: socketPath) }
        logger.notice("no household here yet: open the page to start one or join one", metadata: ["url": "\(web ?? "none")"])
        onServing(web)
        let served = handles
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for handle in served { group.addTask { try await handle.serve() } }
                    group.addTask {
                        try await ControlServer.serve(control, logger: logger, feed: EventFeed()) { request in
                            // `init` or `join` in a terminal made the household meanwhile (they
                            // tell a running agent, as every write does): taken up at once.
                            if home.hasHousehold {
                                finished.continuation.yield()
                                if request.op == "changed" { return ControlResponse(ok: true) }
                            }
                            return Self.handle(request, web: web, logins: logins, home: home)
                        }
                    }
                    group.addTask {
                        for await _ in finished.stream { return }
                    }
                    // The first to end: the household made (or a server failing) ends the welcome.
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch is CancellationError {}
        return Outcome(household: home.hasHousehold, web: web, peer: joinedAt.withLock { $0 })
    }

    /// The control socket while there is no household: the page's sign-in, and a clear
    /// refusal for everything else.
    static func handle(_ request: ControlRequest, web: String?, logins: FrontEndLogins, home: HouseholdHome) -> ControlResponse {
        guard request.op == "open" else { return .refused(.noHousehold, ["path": .string(home.path)]) }
        guard let web else { return .refused(.noWebPage, ["reason": "off"]) }
        return ControlResponse(
            ok: true,
            result: .object([
                "url": .string(web), "login": .string("\(web)/login?token=\(logins.issue())"),
                "expires": .integer(WallClock.now() + FrontEndLogins.lifetime),
            ]))
    }

    /// One call of a welcome's method: its parameters, the home, and where a join was told to
    /// find the other computer.
    struct Call: Sendable {
        let params: [String: JSONValue]
        let home: HouseholdHome
        let logger: Logger
        let joinedAt: @Sendable (PeerAddress) -> Void
        func text(_ key: String) -> String? { if case let .string(value)? = params[key] { value } else { nil } }
    }

    /// The welcome's two methods (docs/API.md, "First run"), each declared once: there is no
    /// household to run the household's (``HouseholdAPI``) on, and a join waits on the network.
    /// `welcome.start {household, members}` makes a household as `pulse-peer init` does (this
    /// computer belongs to the first member); `welcome.join {code, peer?, name?, member?}` joins
    /// as `pulse-peer join` does (`member`: who uses this computer).
    static let declared: [String: @Sendable (Call) async -> ControlResponse] = [
        "welcome.start": { call in
            var members: [String] = []
            if let value = call.params["members"] {
                guard case let .array(items) = value, items.count <= 20 else {
                    return .refused(.wrongType, ["key": "members", "type": "strings"])
                }
                for item in items {
                    guard case let .string(name) = item else { return .refused(.wrongType, ["key": "members", "type": "strings"]) }
                    if !name.trimmed.isEmpty { members.append(name) }
                }
            }
            do {
                let household = try Household.create(call.home, name: call.text("household"), members: members, label: call.text("name"))
                call.logger.notice("household created from the page", metadata: ["household": "\(household.householdID)"])
                return ControlResponse(ok: true, result: .object(["household": .string(household.householdID)]))
            } catch {
                return .failed(error)
            }
        },
        "welcome.join": { call in
            guard let code = call.text("code") else {
                return .refused(.missingParameter, ["method": "welcome.join", "key": "code", "type": "string"])
            }
            var peer: PeerAddress?
            if let address = call.text("peer"), !address.trimmed.isEmpty {
                guard let parsed = PeerAddress(address.trimmed) else { return .refused(.peerAddress, ["value": .string(address)]) }
                peer = parsed
            }
            do {
                let joined = try await Pairing.join(
                    home: call.home, code: code, peer: peer, timeout: .seconds(30), label: call.text("name"),
                    member: call.text("member").flatMap { $0.trimmed.isEmpty ? nil : $0 })
                call.logger.notice("joined a household from the page", metadata: ["household": "\(joined.householdID)"])
                if let peer { call.joinedAt(peer) }
                return ControlResponse(
                    ok: true, result: .object(["household": .string(joined.householdID), "name": .string(joined.householdName)]))
            } catch let error as PairingError {
                return .failed(error.refusal)
            } catch {
                return .failed(error)
            }
        },
    ]

    /// Calls a welcome's method; any other is refused as there being no household yet.
    static func call(
        _ method: String, _ params: [String: JSONValue], home: HouseholdHome, logger: Logger,
        joinedAt: @escaping @Sendable (PeerAddress) -> Void = { _ in }
    ) async -> ControlResponse {
        guard let run = declared[method] else { return .refused(.noHousehold, ["path": .string(home.path)]) }
        return await run(Call(params: params, home: home, logger: logger, joinedAt: joinedAt))
    }
}
