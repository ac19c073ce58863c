import Crypto
import FoundationEssentials
import PulseModel

/// One advertisement seen on the network, merged over the interfaces and protocols it
/// was reported on. Plain values: no Avahi type leaves the Avahi wrapper.
public struct DiscoveredService: Sendable, Hashable {
    public var name: String
    public var txt: [String: String]
    public var port: Int
    /// Resolved addresses, IPv4 first; IPv6 link-local ones carry their scope (`fe80::1%eth0`).
    public var addresses: [String]
    /// Published on this host (another process on the same machine).
    public var isLocal: Bool
}

/// Events from a discovery backend.
public enum DiscoveryEvent: Sendable, Equatable {
    /// The backend's state, for `status`: running, or unavailable and why.
    case availability(available: Bool, detail: String)
    /// A service was resolved (again): the full, merged view of it.
    case found(DiscoveredService)
    /// A service disappeared from every interface.
    case lost(name: String)
}

/// What the agent publishes about itself.
public struct Advertisement: Sendable, Equatable {
    public static let serviceType = "_housepulse._tcp"
    public var name: String
    public var port: Int
    public var txt: [String]

    public init(name: String, port: Int, txt: [String]) {
        self.name = name
        self.port = port
        self.txt = txt
    }
}

/// The TXT records: `v` (protocol version), `id` (machine id), `n` (a nonce drawn at each
/// start) and `tag`, a keyed hash that only the household can check:
/// `hex(HMAC-SHA256(secret, "house-pulse/1 mdns" ‖ 0 ‖ id ‖ 0 ‖ n)[0..<16])`.
/// Each machine's tag differs and changes at each start, so a stranger can neither tell
/// which machines form a household nor link a tag across households or restarts.
public enum HouseholdTag {
    public static func compute(secret: SymmetricKey, machineID: String, nonce: String) -> String {
        var hmac = HMAC<SHA256>(key: secret)
        hmac.update(data: Array("house-pulse/1 mdns".utf8) + [0] + Array(machineID.utf8) + [0] + Array(nonce.utf8))
        return Hex.string(Array(hmac.finalize()).prefix(16))
    }

    /// `version`: the protocol version the agent speaks (discovery only carries it).
    public static func txtRecords(version: Int, secret: SymmetricKey, machineID: String, nonce: String) -> [String] {
        ["v=\(version)", "id=\(machineID)", "n=\(nonce)",
         "tag=\(compute(secret: secret, machineID: machineID, nonce: nonce))"]
    }

    /// Whether an advertisement belongs to this household (constant-time comparison).
    public static func matches(_ txt: [String: String], secret: SymmetricKey) -> Bool {
        guard let id = txt["id"], let nonce = txt["n"], let tag = txt["tag"], tag.count == 32 else { return false }
        let expected = Array(compute(secret: secret, machineID: id, nonce: nonce).utf8)
        let given = Array(tag.lowercased().utf8)
        return expected.count == given.count && zip(expected, given).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    public static func newNonce() -> String {
        Hex.string((0..<8).map { _ in UInt8.random(in: 0...255) })
    }
}
