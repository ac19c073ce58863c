import PulseModel
import PulseStore
import PulseIdentity
import PulseHousehold
import PulseProtocol
import PulseTransport
import PulseDiscovery
/// What `pulse-peer status` shows: this machine and each peer. Plain Codable values,
/// the same for the CLI's human output and `--json`.
public struct AgentStatus: Sendable, Codable, Equatable {
    public struct Machine: Sendable, Codable, Equatable {
        public var machineID: String
        public var replicaID: String
        public var householdID: String
        public var household: String
        public var member: String?
        public var listenAddress: String
        public var port: Int
        public var changes: UInt64
        /// mDNS: what Avahi is doing, or why it is unavailable, or "off".
        public var discovery: String
        /// Changes from peers this agent applied since it started (each changed something here).
        public var appliedChanges: UInt64
        /// Local API clients waiting (`status --wait`) right now.
        public var pendingWaits: Int
        /// What needs a person's attention on this machine (a full disk, a wrong clock…).
        public var warnings: [String]
    }

    public struct Peer: Sendable, Codable, Equatable {
        public enum State: String, Sendable, Codable { case connecting, connected, disconnected }
        public var name: String?
        public var machineID: String?
        public var replicaID: String?
        public var addresses: [String]
        /// How it was found: "static", "mdns", "inbound".
        public var foundBy: [String]
        public var state: State
        /// Unix milliseconds of the last message from it.
        public var lastSeen: Int64?
        /// Changes this machine has that the peer has not confirmed.
        public var peerLacks: UInt64?
        /// Changes the peer reported that this machine does not have.
        public var weLack: UInt64?
        /// Connected, both initial catch-ups done, nothing missing either way.
        public var inSync: Bool
        public var lastError: String?
        /// Bytes of the current (or last) session: on the wire (TLS, handshake included)
        /// and as protocol frames.
        public var sessionBytes: ByteCounts.Snapshot?
    }

    public var machine: Machine
    public var peers: [Peer]
}
