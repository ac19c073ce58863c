import FoundationEssentials
import PulseModel

/// A JSON value, for the local API's parameters and results.
///
/// Integers stay exact (docs/API.md, "Numbers"): a whole number read from JSON is an
/// ``integer``, and one is written as a JSON number when a double holds it exactly
/// (|n| ≤ 2⁵³ − 1, what JavaScript's `Number` reads without loss) and as a decimal string
/// beyond that (the ordering keys `listed` and `created`, ≈ 1.2 × 10¹⁷).
public enum JSONValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let v = try? container.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? container.decode(Int64.self) {
            self = .integer(v)
        } else if let v = try? container.decode(Double.self) {
            self = .number(v)
        } else if let v = try? container.decode(String.self) {
            self = .string(v)
        } else if let v = try? container.decode([JSONValue].self) {
            self = .array(v)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(v): try container.encode(v)
        case let .integer(v):
            if Self.exactInJavaScript.contains(v) { try container.encode(v) } else { try container.encode(String(v)) }
        case let .number(v): try container.encode(v)
        case let .string(v): try container.encode(v)
        case let .array(v): try container.encode(v)
        case let .object(v): try container.encode(v)
        }
    }

    /// The integers a double (JavaScript's only number) holds exactly: ±(2⁵³ − 1).
    public static let exactInJavaScript: ClosedRange<Int64> = -(1 << 53 - 1)...(1 << 53 - 1)

    /// A whole number, from an integer or an integral double.
    public var integerValue: Int64? {
        switch self {
        case let .integer(v): v
        case let .number(v) where v == v.rounded() && abs(v) < 9.0e15: Int64(v)
        default: nil
        }
    }

    /// Any Encodable value as JSON.
    package static func from<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }
}

/// Who calls a method of the local API. The agent itself, in process, may call every method;
/// each method names the others it answers (``APIMethod/audiences``).
public enum APIAudience: String, Sendable, CaseIterable {
    /// The control socket: the CLI and this machine's user's own scripts.
    case control
    /// The computer's own page, signed in by a link from the control socket.
    case page
    /// A phone paired with the household (its cookie, or its roaming credential at another agent).
    case phone
    /// This agent, in process (its phones' listener, its CA).
    case agent
}

/// The caller of one method: its audience and, for a phone, the member it acts as (its writes
/// are signed with that member). Passed in explicitly; nothing about it is ambient.
public struct APICaller: Sendable, Equatable {
    public let audience: APIAudience
    /// A phone's member (nil: a phone of nobody in particular); for other audiences, nil and
    /// unused (this machine's member).
    public let phoneMember: String?

    public static let control = APICaller(audience: .control, phoneMember: nil)
    public static let page = APICaller(audience: .page, phoneMember: nil)
    public static let agent = APICaller(audience: .agent, phoneMember: nil)
    public static func phone(member: String?) -> APICaller { APICaller(audience: .phone, phoneMember: member) }
}

/// One method of the local API, declared once next to its rule (`Shopping.swift` declares
/// `shop.*`): its name, whether it may write, who may call it, and how its parameters become
/// a call of the household's rule and its result JSON.
public struct APIMethod: Sendable {
    public let name: String
    /// Whether a call may change the household or this machine's settings. A method that only
    /// reads is never followed by a push to peers (``APIRegistry``'s test holds every reading
    /// method to changing nothing).
    public let writes: Bool
    /// Who outside the agent may call it (the agent itself may call every method). Empty: the
    /// agent's own plumbing, on no public list.
    public let audiences: Set<APIAudience>
    let run: @Sendable (APIArguments, Household) throws -> JSONValue

    /// What the control socket and the computer's page may call.
    public static let computer: Set<APIAudience> = [.control, .page]
    /// The computer's, and a phone's too (the lists and the kids' cards).
    public static let everyone: Set<APIAudience> = [.control, .page, .phone]
    /// The agent's own plumbing (its phones' listener, its CA), on no public list.
    public static let plumbing: Set<APIAudience> = []

    init(
        _ name: String, writes: Bool, for audiences: Set<APIAudience>,
        _ body: @escaping @Sendable (APIArguments, Household) throws -> any Encodable
    ) {
        self.name = name
        self.writes = writes
        self.audiences = audiences
        run = { arguments, household in
            let result = try body(arguments, household)
            return try result as? JSONValue ?? .from(result)
        }
    }

    /// A method that only reads.
    static func read(
        _ name: String, for audiences: Set<APIAudience> = computer,
        _ body: @escaping @Sendable (APIArguments, Household) throws -> any Encodable
    ) -> APIMethod {
        APIMethod(name, writes: false, for: audiences, body)
    }

    /// A method that may write.
    static func write(
        _ name: String, for audiences: Set<APIAudience> = computer,
        _ body: @escaping @Sendable (APIArguments, Household) throws -> any Encodable
    ) -> APIMethod {
        APIMethod(name, writes: true, for: audiences, body)
    }

    /// Whether `caller` may call it.
    public func allows(_ audience: APIAudience) -> Bool { audience == .agent || audiences.contains(audience) }
}

/// A method's parameters as its declaration reads them, each refusal the API's own
/// (`missing_parameter` with the method, key and type; `wrong_type`): docs/API.md.
struct APIArguments {
    let method: String
    let params: [String: JSONValue]

    subscript(key: String) -> JSONValue? { params[key] }

    func string(_ key: String) throws -> String {
        guard case let .string(value)? = params[key] else { throw missing(key, "string") }
        return value
    }
    func optional(_ key: String) throws -> String? {
        switch params[key] {
        case nil, .null?: return nil
        case let .string(value)?: return value
        default: throw HouseholdError.refuse(.wrongType, ["key": .string(key), "type": "string"])
        }
    }
    func flag(_ key: String) -> Bool { if case .bool(true)? = params[key] { true } else { false } }
    func integer(_ key: String) throws -> Int {
        guard let value = params[key]?.integerValue, abs(value) <= 1_000_000 else { throw missing(key, "integer") }
        return Int(value)
    }
    func strings(_ key: String) throws -> [String] {
        guard case let .array(values)? = params[key] else { throw missing(key, "strings") }
        return try values.map { value -> String in
            guard case let .string(text) = value else { throw HouseholdError.refuse(.wrongType, ["key": .string(key), "type": "strings"]) }
            return text
        }
    }
    /// A boolean that may be absent (nil).
    func bool(_ key: String) throws -> Bool? {
        switch params[key] {
        case nil: return nil
        case let .bool(value)?: return value
        default: throw HouseholdError.refuse(.wrongType, ["key": .string(key), "type": "boolean"])
        }
    }
    /// An object's fields, read as parameters of their own (absent or null: nil).
    func object(_ key: String) throws -> APIArguments? {
        switch params[key] {
        case nil, .null?: return nil
        case let .object(fields)?: return APIArguments(method: method, params: fields)
        default: throw HouseholdError.refuse(.wrongType, ["key": .string(key), "type": "object"])
        }
    }
    /// A field an edit may leave (absent: nil), clear (null: `.some(nil)`) or set.
    func edit(_ key: String) throws -> String?? {
        switch params[key] {
        case nil: return nil
        case .null?: return .some(nil)
        case let .string(value)?: return .some(value)
        default: throw HouseholdError.refuse(.wrongType, ["key": .string(key), "type": "string_or_null"])
        }
    }
    func missing(_ key: String, _ type: JSONValue) -> HouseholdError {
        HouseholdError.refuse(.missingParameter, ["method": .string(method), "key": .string(key), "type": type])
    }
}

/// A set of methods, each by its one declaration: the dispatch, the lists by audience and the
/// documentation's check all read it (docs/ARCHITECTURE.md, "Add a method").
public struct APIRegistry: Sendable {
    public let methods: [APIMethod]
    private let byName: [String: APIMethod]

    public init(_ methods: [APIMethod]) {
        var byName: [String: APIMethod] = [:]
        for method in methods {
            precondition(byName.updateValue(method, forKey: method.name) == nil, "the API method \(method.name) is declared twice")
        }
        self.methods = methods
        self.byName = byName
    }

    public subscript(name: String) -> APIMethod? { byName[name] }

    /// The names `audience` may call, in order of name.
    public func names(for audience: APIAudience) -> [String] {
        methods.filter { $0.allows(audience) }.map(\.name).sorted()
    }

    /// Whether `audience` may call `name`.
    public func allows(_ name: String, _ audience: APIAudience) -> Bool { byName[name]?.allows(audience) ?? false }

    /// The names `audience` may call that only read (``APIMethod/writes`` false), in order of name.
    public func reads(for audience: APIAudience) -> [String] {
        methods.filter { $0.allows(audience) && !$0.writes }.map(\.name).sorted()
    }

    /// Calls `method` for `caller` on `household`: an unknown method, or one the caller may not
    /// call, is refused as unknown (`unknown_method`, with the names it may call).
    public func call(_ method: String, _ params: [String: JSONValue], on household: Household, as caller: APICaller) throws -> JSONValue {
        guard let declared = byName[method], declared.allows(caller.audience) else {
            throw HouseholdError.refuse(.unknownMethod, ["method": .string(method), "methods": JSONValue(names(for: caller.audience))])
        }
        let acting = caller.audience == .phone ? household.acting(as: caller.phoneMember) : household
        return try declared.run(APIArguments(method: method, params: params), acting)
    }
}

/// The household's operations for app clients (docs/API.md): each method calls the same
/// `Household` rule the CLI calls, with the same checks and error messages. Each is declared
/// once, next to its rule.
public enum HouseholdAPI {
    public static let registry = APIRegistry(
        Household.householdMethods + Household.memberMethods + Household.settingsMethods + Household.shoppingMethods + Household.shoppingTripMethods
            + Household.taskMethods + Household.backlogMethods + Household.recurringMethods + Household.rotationMethods + Household.conflictMethods
            + Household.machineMethods + Household.phoneMethods + Household.caMethods + Household.kidsMethods + Household.goalMethods
            + Household.approvalMethods + Household.kidsTurnMethods + Household.appPasswordMethods
            + Household.pinMethods + nextReleaseMethods)

    /// The methods the control socket (and the computer's page) may call.
    public static var methods: [String] { registry.names(for: .control) }

    #if DEBUG
    /// The "next" test release's methods (``TestRelease``: TwoReleasesTests): a note, a shopping
    /// item's brand.
    static let nextReleaseMethods = TestRelease.next ? Household.nextMethods : []
    #else
    static let nextReleaseMethods: [APIMethod] = []
    #endif

    public static func call(
        _ method: String, _ params: [String: JSONValue], on household: Household, as caller: APICaller = .control
    ) throws -> JSONValue {
        try registry.call(method, params, on: household, as: caller)
    }
}

extension Household {
    package struct HouseholdSummary: Encodable {
        package let id: String
        package let name: String
        package let members: [Member]
        package let settings: HouseholdSettings
        /// The focus rule's limit of active tasks (the page shows it; the rule lives here).
        package let focusLimit: Int
    }

    static let householdMethods: [APIMethod] = [
        .read("household.get", for: APIMethod.everyone) { _, h in
            HouseholdSummary(
                id: h.householdID, name: try h.householdName(), members: try h.members(), settings: try h.settings(),
                focusLimit: Household.focusLimit)
        },
        .write("household.rename") { a, h in try h.renameHousehold(a.string("name")) },
    ]
}
