import PulseHousehold

/// Requests on the local control socket: one JSON object per line, answered by one
/// JSON object per line (docs/API.md).
public struct ControlRequest: Sendable, Codable {
    public var op: String
    /// For `wait`: the condition (see ``WaitCondition``) and how long to wait.
    public var until: WaitCondition?
    public var timeoutMilliseconds: Int?
    /// For `call`: a household method (docs/API.md) and its parameters.
    public var method: String?
    public var params: [String: JSONValue]?
    /// For `invite`: the member the new machine belongs to, and how long the code lives.
    public var member: String?
    public var minutes: Int?
    /// For `subscribe`: the topics (default all) and the token to resume after.
    public var topics: [String]?
    public var resume: String?

    public init(
        op: String, until: WaitCondition? = nil, timeoutMilliseconds: Int? = nil,
        method: String? = nil, params: [String: JSONValue]? = nil, member: String? = nil, minutes: Int? = nil,
        topics: [String]? = nil, resume: String? = nil
    ) {
        self.topics = topics
        self.resume = resume
        self.member = member
        self.minutes = minutes
        self.op = op
        self.until = until
        self.timeoutMilliseconds = timeoutMilliseconds
        self.method = method
        self.params = params
    }
}

/// What `wait` waits for, judged on the agent's status.
public struct WaitCondition: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// At least `peers` peers connected, and every connected peer in sync.
        case synced
        /// At least `peers` peers known, none connected.
        case disconnected
    }
    public var kind: Kind
    public var peers: Int

    public init(_ kind: Kind, peers: Int = 1) {
        self.kind = kind
        self.peers = peers
    }

    public func isMet(by status: AgentStatus) -> Bool {
        let connected = status.peers.filter { $0.state == .connected }
        switch kind {
        case .synced: return connected.count >= peers && connected.allSatisfy(\.inSync)
        case .disconnected: return status.peers.count >= peers && connected.isEmpty
        }
    }
}

public struct ControlResponse: Sendable, Codable {
    /// A refusal's answer.
    public static func refused(_ code: Refusal.Code, _ params: [String: JSONValue] = [:], status: AgentStatus? = nil) -> ControlResponse {
        ControlResponse(ok: false, error: Refusal(code, params).body, status: status)
    }

    /// An error's answer (a household refusal keeps its code; anything else is `failed`).
    public static func failed(_ error: any Error) -> ControlResponse { ControlResponse(ok: false, error: Refusal(error).body) }

    public var ok: Bool
    /// Why not: a refusal's code, parameters and English message (docs/API.md, "Refusal codes").
    public var error: ErrorBody?
    public var status: AgentStatus?
    public var result: JSONValue?

    private enum CodingKeys: String, CodingKey { case ok, error, status, result }

    /// Also reads an answer of an earlier release, whose `error` was a sentence (then `failed`
    /// with that sentence), so a CLI and an agent of different releases still understand a refusal.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        ok = try container.decode(Bool.self, forKey: .ok)
        if let sentence = try? container.decodeIfPresent(String.self, forKey: .error) {
            error = ErrorBody(code: Refusal.Code.failed.rawValue, params: ["detail": .string(sentence)], message: sentence)
        } else {
            error = try container.decodeIfPresent(ErrorBody.self, forKey: .error)
        }
        status = try container.decodeIfPresent(AgentStatus.self, forKey: .status)
        result = try container.decodeIfPresent(JSONValue.self, forKey: .result)
    }

    public init(ok: Bool, error: ErrorBody? = nil, status: AgentStatus? = nil, result: JSONValue? = nil) {
        self.ok = ok
        self.error = error
        self.status = status
        self.result = result
    }
}
