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
    /// This machine's advertisement is established (probed and announced) under `name`:
    /// from now on other machines can find it. Until then none can have.
    case published(name: String)
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

/// The TXT records: `v` (protocol version), `n` (a nonce drawn at each start) and `tag`, a
/// keyed hash that only the household's machines can check:
/// `hex(HMAC-SHA256(key, "house-pulse/3 mdns" ‖ 0 ‖ machine id ‖ 0 ‖ n)[0..<16])`, with the
/// household's current advertisement key. The machine id is not published: a machine of
/// the household finds it by checking the tag against each machine it trusts and each key
/// it knows (a handful of HMACs). So a stranger can neither tell which machines form a
/// household nor link an advertisement across households or restarts, and a removed
/// machine, which never learns the key made at its removal, recognises nothing.
public enum HouseholdTag {
    public static func compute(key: SymmetricKey, machineID: String, nonce: String) -> String {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: Array("house-pulse/3 mdns".utf8) + [0] + Array(machineID.utf8) + [0] + Array(nonce.utf8))
        return Hex.string(Array(hmac.finalize()).prefix(16))
    }

    /// `version`: the protocol version the agent speaks (discovery only carries it).
    public static func txtRecords(version: Int, key: SymmetricKey, machineID: String, nonce: String) -> [String] {
        ["v=\(version)", "n=\(nonce)", "tag=\(compute(key: key, machineID: machineID, nonce: nonce))"]
    }

    /// The machine (among `machines`) that published `txt` with one of `keys`, or nil:
    /// another household's, a stranger's, or a machine not trusted here.
    public static func machine(publishing txt: [String: String], keys: [SymmetricKey], machines: [String]) -> String? {
        guard let nonce = txt["n"], nonce.utf8.count <= 64, let tag = txt["tag"], tag.count == 32 else { return nil }
        let given = Array(tag.lowercased().utf8)
        for key in keys {
            for machine in machines {
                let expected = Array(compute(key: key, machineID: machine, nonce: nonce).utf8)
                if expected.count == given.count && zip(expected, given).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 { return machine }
            }
        }
        return nil
    }

    public static func newNonce() -> String {
        Hex.string((0..<8).map { _ in UInt8.random(in: 0...255) })
    }
}
