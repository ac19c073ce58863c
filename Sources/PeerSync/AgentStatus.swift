import PulseTransport
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
        /// What needs a person's attention on this machine (a full disk, a wrong clock…), in
        /// English; the same as data in ``notices``, for each reader to render in their words.
        public var warnings: [String]
        /// ``warnings`` as message keys and parameters (`status.clock_self`, …; docs/LANGUAGES.md).
        public var notices: [Notice] = []
        /// The last sessions refused either way, newest first (at most 5).
        public var refusals: [Refusal] = []
        /// The open pairing invitation: until when (Unix ms) and attempts left (never the code).
        public var invitationExpires: Int64?
        public var invitationAttemptsLeft: Int?
        /// Notifications since the agent started, and why a channel is not working.
        public var notifications = Notifications()
        /// Live feed subscribers connected now.
        public var subscribers = 0
        /// The web page's address (nil: none serves; `warnings` says why when it should).
        public var web: String?
        /// The software the agent runs (`pulse-peer --version`'s words: "pulse-peer 0.10.0 (commit …)").
        public var software: String?
        /// The protocol versions this agent speaks ("9", or "9–10").
        public var protocols: String?
    }

    /// A warning as data: the message `key` of the catalogues and its parameters.
    public struct Notice: Sendable, Codable, Equatable {
        public var key: String
        public var params: [String: JSONValue]
        public init(_ key: String, _ params: [String: JSONValue] = [:]) {
            self.key = key
            self.params = params
        }
        /// A problem in the system's words (a full disk, an address in use).
        public static func problem(_ detail: String) -> Notice { Notice("status.problem", ["detail": .string(detail)]) }
        /// In the words of `catalogue`.
        public func text(_ catalogue: MessageCatalogue = .english) -> String { catalogue.text(key, params) }

        /// Two agents that share no protocol version (this one speaks `ours`, the peer named
        /// `name` `theirs`): which computer to update. The one whose versions are all below the
        /// other's is the older; `release`: this computer's (`0.10.0`), the least the peer needs.
        public static func protocolMismatch(
            peer name: String, ours: ClosedRange<UInt16>, theirs: ClosedRange<UInt16>, release: String?
        ) -> Notice {
            func words(_ range: ClosedRange<UInt16>) -> String {
                range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound)–\(range.upperBound)"
            }
            var params: [String: JSONValue] = ["name": .string(name), "ours": .string(words(ours)), "theirs": .string(words(theirs))]
            guard theirs.upperBound < ours.lowerBound else { return Notice("status.update_self", params) }
            guard let release else { return Notice("status.update_peer_any", params) }
            params["release"] = .string(release)
            return Notice("status.update_peer", params)
        }
    }

    public struct Notifications: Sendable, Codable, Equatable {
        /// Shown (each follow-up counts as one).
        public var shown = 0
        /// Events waiting in an open burst to be shown (the debounce, or the window's follow-up).
        public var pendingEvents = 0
        /// Events the notifier has judged (notified or not), since the agent started.
        public var judgedEvents = 0
        /// Why desktop notifications or the hook are not working now (nil: working, or off), in
        /// English; the desktop's also as a code each reader words in its language
        /// (`desktop.problem.CODE`: `DesktopUnavailable.Kind`) with the system's own detail.
        public var desktopProblem: String?
        public var desktopProblemCode: String?
        public var desktopProblemDetail: String?
        public var hookProblem: String?
        public init() {}
    }

    /// A session refused: by the peer (`byPeer`), or by this machine.
    public struct Refusal: Sendable, Codable, Equatable {
        public var machineID: String
        public var remote: String
        public var reason: String
        public var byPeer: Bool
        /// Unix milliseconds.
        public var at: Int64

        /// "refused by 3fa2c1d0e9b2 (10.0.0.2:47653): this machine was removed from the household".
        public var text: String {
            (byPeer ? "refused by " : "refused ") + "\(machineID.prefix(12)) (\(remote)): \(reason)"
        }
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
        /// The peer's wall clock minus this machine's at the last handshake, in milliseconds.
        public var clockOffsetMilliseconds: Int64?
        /// The release the peer runs ("0.10.0", from its HELLO: protocol 9) and the protocol
        /// version of the last session.
        public var release: String?
        public var protocolVersion: Int?
        /// A batch refused either way (by this machine or by the peer), in words with what to
        /// do; the peer is not in sync while it stands.
        public var problem: String?
        /// ``problem`` as a message key and parameters, when it has one (two agents that share
        /// no protocol version: which computer to update), for each reader to render in their words.
        public var notice: Notice?
    }

    public var machine: Machine
    public var peers: [Peer]

    /// `machine.discovery` when the agent runs with `--no-mdns` (said in words by the CLI).
    public static let discoveryOff = "off (--no-mdns)"

    /// What a header says of the peers: one state, and what it is judged from (each peer's
    /// connection, whether it is in sync, whether it has a problem). The page's header
    /// judges the same way from `status`.
    public struct SyncSummary: Sendable, Equatable {
        public enum State: String, Sendable { case synced, syncing, problem, unreachable, alone }
        public let state: State
        let peers: [String: [Bool]]

        public init(_ peers: [Peer]) {
            let connected = peers.filter { $0.state == .connected }
            state =
                peers.contains { $0.problem != nil }
                ? .problem
                : connected.isEmpty
                    ? (peers.isEmpty ? .alone : .unreachable)
                    : connected.allSatisfy(\.inSync) ? .synced : .syncing
            self.peers = Dictionary(
                peers.map { ($0.machineID ?? $0.addresses.joined(separator: ","), [$0.state == .connected, $0.inSync, $0.problem != nil]) },
                uniquingKeysWith: { first, _ in first })
        }
    }

    /// A difference of clocks worth telling a person about.
    public static let clockWarningMilliseconds: Int64 = 60_000

    /// "15 min 0 s", "2 h 3 min", "40 s".
    public static func describe(milliseconds: Int64) -> String {
        let seconds = abs(milliseconds) / 1000
        if seconds >= 3600 { return "\(seconds / 3600) h \(seconds % 3600 / 60) min" }
        if seconds >= 60 { return "\(seconds / 60) min" + (seconds % 60 == 0 ? "" : " \(seconds % 60) s") }
        return "\(seconds) s"
    }

    /// What the peers' clocks say about this machine's (none when they agree within a
    /// minute). With two or more peers that all differ the same way, the odd one out is this
    /// machine; with one, either may be wrong, and both statuses say so.
    public static func clockWarnings(
        _ peers: [Peer],
        maxAheadMilliseconds: Int64 = HybridClock.defaultMaxDriftMilliseconds
    ) -> [Notice] {
        let measured = peers.filter { $0.state == .connected }.compactMap { peer in
            peer.clockOffsetMilliseconds.map { (name: peer.name ?? String((peer.machineID ?? "?").prefix(12)), offset: $0) }
        }
        let off = measured.filter { abs($0.offset) >= clockWarningMilliseconds }
        guard !off.isEmpty else { return [] }
        let limit = JSONValue.string(describe(milliseconds: maxAheadMilliseconds))
        if measured.count >= 2, off.count == measured.count,
            off.allSatisfy({ ($0.offset > 0) == (off[0].offset > 0) })
        {
            let typical = off.map(\.offset).sorted()[off.count / 2]
            return [
                Notice(
                    "status.clock_self",
                    [
                        "offset": .string(describe(milliseconds: typical)), "direction": .string(typical > 0 ? "behind" : "ahead"),
                        "peers": JSONValue(measured.count), "limit": limit,
                    ])
            ]
        }
        return off.map { peer in
            Notice(
                "status.clock_peer",
                [
                    "peer": .string(peer.name), "offset": .string(describe(milliseconds: peer.offset)),
                    "direction": .string(peer.offset > 0 ? "ahead" : "behind"), "limit": limit,
                ])
        }
    }
}
