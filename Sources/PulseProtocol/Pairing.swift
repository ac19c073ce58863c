import Crypto
import FoundationEssentials
import PulseModel

/// A pairing code: 10 decimal digits a person can read aloud or type, shown as
/// `123-456-7890`. It is only ever used as the password of a PAKE (SPAKE2) whose
/// transcript is bound to both machines' TLS keys, so a captured exchange gives nothing to
/// test guesses against offline; online, each attempt tests one guess, and an invitation
/// allows ``PairingInvitation/maxAttempts`` of them (docs/SECURITY.md).
public enum PairingCode {
    public static let digits = 10

    /// A fresh code from the system's CSPRNG, digits only.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = UInt64.random(in: 0..<10_000_000_000, using: &generator)
        let text = String(value)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// The digits of what a person typed (spaces and dashes ignored); nil unless exactly 10 digits.
    public static func normalize(_ typed: String) -> String? {
        let kept = typed.filter { $0 != " " && $0 != "-" }
        guard kept.count == digits, kept.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return kept
    }

    /// `1234567890` → `123-456-7890`.
    public static func display(_ code: String) -> String {
        let c = Array(code)
        guard c.count == digits else { return code }
        return String(c[0..<3]) + "-" + String(c[3..<6]) + "-" + String(c[6...])
    }

    /// The SPAKE2 password: a label, then the digits.
    public static func password(_ code: String) -> [UInt8] {
        Array("house-pulse/3 pairing".utf8) + [0] + Array(code.utf8)
    }
}

/// A password-authenticated key exchange, one run per instance (SPAKE2 from BoringSSL in
/// the transport layer; a protocol here so that the pairing rules stay free of C).
public protocol PasswordKeyExchange: AnyObject {
    func message(password: [UInt8]) -> [UInt8]?
    func key(peerMessage: [UInt8]) -> [UInt8]?
}

/// Key confirmation for pairing (SPAKE2 brings none): from the exchange's key, HKDF-SHA256
/// derives one key per side, and each side sends `HMAC-SHA256(its key, role ‖ msg_client ‖
/// msg_server)`. The server confirms first; the client answers only after checking it.
public enum PairingConfirmation {
    public static func expected(
        key: [UInt8], role: MembershipProof.Role, clientMachine: [UInt8], serverMachine: [UInt8],
        clientMessage: [UInt8], serverMessage: [UInt8]
    ) -> [UInt8] {
        let info = Array("house-pulse/3 pairing confirmation".utf8) + [0] + clientMachine + serverMachine
        let keys = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: key), info: info, outputByteCount: 64)
        let bytes = keys.withUnsafeBytes { Array($0) }
        let own = SymmetricKey(data: role == .server ? bytes[0..<32] : bytes[32..<64])
        let label = Array((role == .server ? "server" : "client").utf8)
        return Array(HMAC<SHA256>.authenticationCode(for: label + [0] + clientMessage + serverMessage, using: own))
    }

    /// Constant-time comparison.
    public static func matches(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        given.count == expected.count && zip(given, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// The one open invitation of an agent: its code, for whom, until when, and how many
/// attempts are left. Kept in memory only (a restart closes it). A plain value: the agent
/// keeps it behind a lock and asks it, at each attempt, whether to go on.
public struct PairingInvitation: Sendable, Equatable {
    public static let maxAttempts = 3
    public static let defaultLifetimeMilliseconds: Int64 = 10 * 60 * 1000

    public let code: String
    public let memberID: String?
    /// Unix milliseconds after which the code is dead.
    public let expires: Int64
    public private(set) var attemptsLeft = PairingInvitation.maxAttempts
    public private(set) var used = false

    public init(code: String, memberID: String?, expires: Int64) {
        self.code = code
        self.memberID = memberID
        self.expires = expires
    }

    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case none, expired, exhausted, used
        public var description: String {
            switch self {
            case .none: "no invitation is open on this machine: run `pulse-peer invite` there first"
            case .expired: "the pairing code has expired: make a new one with `pulse-peer invite`"
            case .exhausted: "too many wrong attempts: the pairing code no longer works; make a new one with `pulse-peer invite`"
            case .used: "the pairing code was already used: make a new one with `pulse-peer invite`"
            }
        }

        /// The refusal an inviting agent sent as its words (the wire carries them as they are,
        /// docs/PROTOCOL.md §9): recognised so that the joining side says it in its reader's words.
        public init?(wireText: String) {
            guard let match = [Self.none, .expired, .exhausted, .used].first(where: { $0.description == wireText }) else { return nil }
            self = match
        }
    }

    /// An attempt begins (one guess of the code): counted now, whatever happens next, so
    /// a dropped connection costs an attempt too.
    public mutating func beginAttempt(now: Int64) -> Refusal? {
        if used { return .used }
        if now >= expires { return .expired }
        if attemptsLeft == 0 { return .exhausted }
        attemptsLeft -= 1
        return nil
    }

    /// The attempt proved the code: the invitation is spent.
    public mutating func succeed() { used = true }
}
