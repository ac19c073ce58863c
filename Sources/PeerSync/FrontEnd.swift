import Crypto
import FoundationEssentials
import PulseIdentity
import PulseHousehold
import Synchronization

/// A front end the agent runs beside sync (the web page, `PulseWeb`): it reaches the
/// household only through ``LocalAPI`` — the same operations as the control socket — so no
/// rule is written twice, and it lives and stops with the agent (a child of its task group:
/// bounded shutdown, no detached tasks).
public protocol AgentFrontEnd: Sendable {
    /// Binds whatever it listens on; called once before the agent reports ready. Throwing
    /// stops the agent's start (a front end asked for explicitly that cannot run); a front
    /// end that may be missing returns a handle with a `problem` instead.
    func start(_ api: LocalAPI) async throws -> FrontEndHandle
}

/// A started front end.
public struct FrontEndHandle: Sendable {
    /// Where people reach it (nil when it is not serving).
    public var url: String?
    /// Why it is not serving, for `status` (nil: serving).
    public var problem: String?
    /// Serves until cancelled (the agent stopping).
    public var serve: @Sendable () async throws -> Void
    /// Methods this front end adds to the local API (`phones.get`, …): answered for the
    /// control socket and every front end alike, after the household's own.
    public var methods: [String: FrontEndMethod]

    public init(
        url: String?, problem: String? = nil, methods: [String: FrontEndMethod] = [:],
        serve: @escaping @Sendable () async throws -> Void
    ) {
        self.url = url
        self.problem = problem
        self.methods = methods
        self.serve = serve
    }
}

/// A local API method a front end answers (its own state, not the household's rows: what
/// changes the household goes through ``LocalAPI/call(_:_:)`` like any other writer).
public struct FrontEndMethod: Sendable {
    public let run: @Sendable ([String: JSONValue]) async -> ControlResponse
    public init(_ run: @escaping @Sendable ([String: JSONValue]) async -> ControlResponse) { self.run = run }
}

/// The front ends' methods, set once they started (the API exists before them).
final class FrontEndMethods: Sendable {
    private let methods = Mutex<[String: FrontEndMethod]>([:])
    func set(_ handles: [FrontEndHandle]) {
        methods.withLock { methods in
            for handle in handles { methods.merge(handle.methods) { first, _ in first } }
        }
    }
    subscript(name: String) -> FrontEndMethod? { methods.withLock { $0[name] } }
    var names: Set<String> { methods.withLock { Set($0.keys) } }
}

/// What a front end may ask of the running agent: the local API's operations, in process.
public struct LocalAPI: Sendable {
    let callMethod: @Sendable (String, [String: JSONValue], APICaller) async -> ControlResponse
    let inviteMethod: @Sendable (String?, Int) async -> ControlResponse
    let currentStatus: @Sendable () async throws -> AgentStatus
    let feed: EventFeed
    let logins: FrontEndLogins
    var frontEndMethods = FrontEndMethods()
    public let home: HouseholdHome
    /// No household here yet: the page shows its welcome (start or join), and only the
    /// welcome's methods answer (``WelcomeAgent``).
    public var welcome = false
    /// A rule of the household called in process (``read(_:)``, ``write(_:)``): nil before there is
    /// one (the welcome), refused as no household.
    var withHousehold: (@Sendable (Bool, @escaping @Sendable (Household) throws -> any Sendable) async throws -> any Sendable)? = nil
    /// Says something to this computer's person on the desktop now (not a household event:
    /// no policy, no batching), in their words: the catalogue's `summary` and `body` keys.
    var alertMethod: (@Sendable (String, String, [String: JSONValue]) async -> Void)? = nil

    /// A desktop notification of this computer's own (a phone asking to be added): shown at
    /// once where the desktop can, in this computer's person's language; nothing otherwise.
    public func alert(summary: String, body: String, _ params: [String: JSONValue]) async {
        await alertMethod?(summary, body, params)
    }

    /// A household method (docs/API.md) for `caller`, checked and committed exactly as the
    /// control socket's `call`: a write is durable before the answer and pushed to peers after
    /// it. A phone's writes are signed with its member (``APICaller/phone(member:)``).
    public func call(_ method: String, _ params: [String: JSONValue], as caller: APICaller) async -> ControlResponse {
        await callMethod(method, params, caller)
    }

    /// The agent's own parts (its phones' listener, its CA) ask the household in Swift, typed:
    /// `body` runs on the store's actor with the household, and what it returns is the answer.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Household) throws -> T) async throws -> T {
        guard let withHousehold else { throw HouseholdError.notInitialized(home.path) }
        return try await withHousehold(false) { try body($0) } as! T
    }

    /// As ``read(_:)``, for a rule that writes: durable before it returns, pushed to peers after.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Household) throws -> T) async throws -> T {
        guard let withHousehold else { throw HouseholdError.notInitialized(home.path) }
        return try await withHousehold(true) { try body($0) } as! T
    }

    /// Whether `audience` may call `method` here: the household's methods as the registry
    /// allows (before there is a household, the welcome's), and for the computer's page the
    /// front ends' own (``FrontEndHandle/methods``: `phones.*`).
    public func knows(_ method: String, for audience: APIAudience) -> Bool {
        if welcome { return audience == .page && WelcomeAgent.methods.contains(method) }
        return HouseholdAPI.registry.allows(method, audience) || (audience != .phone && frontEndMethods[method] != nil)
    }

    /// The household's methods `audience` may call that only read: the page may ask them with
    /// `GET` (docs/API.md). None before there is a household, and none of the front ends' own.
    public func reads(for audience: APIAudience) -> [String] {
        welcome ? [] : HouseholdAPI.registry.reads(for: audience)
    }

    /// Whether `method` is one of ``reads(for:)``.
    public func onlyReads(_ method: String, for audience: APIAudience) -> Bool {
        !welcome && HouseholdAPI.registry.allows(method, audience) && HouseholdAPI.registry[method]?.writes == false
    }

    /// Opens a pairing invitation for another computer, as `pulse-peer invite` does:
    /// `{code, expires, attempts}`, the code to type on the new computer.
    public func invite(member: String?, minutes: Int) async -> ControlResponse { await inviteMethod(member, minutes) }

    /// The language chosen for this computer's person (``LanguageChoice``); nil when the
    /// household cannot say (then the browser's language is used).
    /// Asked as the page's methods are (`language.get`), so that the web layer's tests stand in
    /// for the agent with no household.
    public func languageChoice() async -> LanguageChoice? {
        let answer = await callMethod("language.get", [:], .agent)
        guard answer.ok, let result = answer.result, let data = try? JSONEncoder().encode(result) else { return nil }
        return try? JSONDecoder().decode(LanguageChoice.self, from: data)
    }

    /// The same as `pulse-peer status --json`.
    public func status() async throws -> AgentStatus { try await currentStatus() }

    /// A backup of the household now (the bytes `pulse-peer backup` writes), made in the
    /// home's backups/ on a dispatch thread (``onDispatchThread(_:)``).
    public func backup() async throws -> [UInt8] {
        let home = self.home
        return try await onDispatchThread {
            let directory = Household.backupsDirectory(home)
            try Directories.make(directory, mode: 0o700)
            let path = directory + "/.download-\(UInt64.random(in: 0...UInt64.max)).sqlite"
            defer { try? FileManager.default.removeItem(atPath: path) }
            try Household.backUp(home, to: path)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw OutputFiles.Failure(description: "cannot read the backup just made")
            }
            return [UInt8](data)
        }
    }

    /// The live feed (docs/API.md, "The live feed"): the newest token, whether `resume`
    /// left a gap, then the events. `close` is called when the feed drops a subscriber that
    /// fell behind. End it with ``LiveFeed/cancel()``.
    /// `counted`: false for a front end's own watcher (not a client: `status` does not count it).
    public func subscribe(
        topics: Set<HouseholdEvent.Topic> = Set(HouseholdEvent.Topic.allCases), resume: String?, counted: Bool = true,
        close: @escaping @Sendable () -> Void
    ) -> LiveFeed {
        let subscription = feed.subscribe(topics: topics, resume: resume, counted: counted, close: close)
        let feed = self.feed
        return LiveFeed(token: subscription.token, gap: subscription.gap, events: subscription.events) {
            feed.unsubscribe(subscription.id)
        }
    }

    /// Tells this agent's live feed that something of this computer's own (not a household
    /// row: `entity` names it, e.g. `phone_request`) changed, so its open pages look again.
    public func announce(entity: String) {
        feed.publish([HouseholdEvent(type: .changed, entity: entity, time: WallClock.now(), local: true)])
    }

    /// Exchanges a login token made by `pulse-peer open` (the control socket's `open`):
    /// true once per token, within its lifetime.
    public func redeemLogin(_ token: String) -> Bool { logins.redeem(token) }

    /// A front end's own file in the home, for what must outlive a restart (the web
    /// page's sessions): owner-only (0600), replaced atomically (a crash leaves the old
    /// file or the new one). `name` is a plain file name.
    public func writePrivateFile(_ name: String, _ data: Data) throws {
        try FileSafety.writeAtomically(data, to: privateFile(name), mode: 0o600)
    }

    public func readPrivateFile(_ name: String) -> Data? { FileManager.default.contents(atPath: privateFile(name).path) }

    private func privateFile(_ name: String) -> URL {
        precondition(!name.isEmpty && !name.contains("/") && !name.hasPrefix("."), "a plain file name")
        return home.directory.appendingPathComponent(name)
    }
}

public struct LiveFeed: Sendable {
    public let token: String
    public let gap: Bool
    public let events: AsyncStream<HouseholdEvent>
    let end: @Sendable () -> Void
    public func cancel() { end() }
}

/// Single-use login tokens for front ends: made on the control socket (only the machine's
/// owner reaches it), redeemed once by the web page, for at most ``lifetime``. Only their
/// SHA-256 is kept; at most ``capacity`` are open (the oldest is dropped).
final class FrontEndLogins: Sendable {
    static let lifetime: Int64 = 120_000
    static let capacity = 8
    private let open = Mutex<[(digest: Data, expires: Int64)]>([])

    /// A new token: 32 random bytes, base64url without padding.
    func issue(now: Int64 = WallClock.now()) -> String {
        let token = RandomToken.make()
        let digest = Data(SHA256.hash(data: Data(token.utf8)))
        open.withLock { open in
            open.removeAll { $0.expires <= now }
            open.append((digest, now + Self.lifetime))
            if open.count > Self.capacity { open.removeFirst(open.count - Self.capacity) }
        }
        return token
    }

    func redeem(_ token: String, now: Int64 = WallClock.now()) -> Bool {
        guard token.utf8.count <= 128 else { return false }
        let digest = Data(SHA256.hash(data: Data(token.utf8)))
        return open.withLock { open in
            open.removeAll { $0.expires <= now }
            guard let index = open.firstIndex(where: { $0.digest == digest }) else { return false }
            open.remove(at: index)
            return true
        }
    }
}

/// A secret for a URL or a cookie: 32 random bytes (swift-crypto's `SymmetricKey`, the
/// system's CSPRNG) as base64url without padding (RFC 4648 §5), 43 characters.
public enum RandomToken {
    public static func make() -> String {
        let base64 = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64EncodedString()
        return String(
            base64.compactMap { c -> Character? in
                switch c {
                case "+": "-";
                case "/": "_";
                case "=": nil;
                default: c
                }
            })
    }
}

/// Where the agent's front ends serve, for `status` and `open`.
final class FrontEndBook: Sendable {
    private let state = Mutex<[(url: String?, problem: String?)]>([])
    func set(_ frontEnds: [(url: String?, problem: String?)]) { state.withLock { $0 = frontEnds } }
    var url: String? { state.withLock { $0.compactMap(\.url).first } }
    var problem: String? { state.withLock { $0.compactMap(\.problem).first } }
}
