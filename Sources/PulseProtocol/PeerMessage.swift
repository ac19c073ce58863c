#if canImport(Glibc)
import Glibc
#endif
import PulseModel
/// The messages two agents exchange (docs/PROTOCOL.md). Plain values: the protocol
/// layer knows the model and nothing of the store, the network or Avahi.
public enum PeerMessage: Sendable, Hashable {
    /// First message of each side. The server answers only after checking the client's proof.
    case hello(Hello)
    /// "This is what I have": sent once by each side right after the handshake; from
    /// protocol 9 each entry with the stamp at its number and the origin's seal.
    case vector(HistoryHeads)
    /// Changes and the coverage they bring, applied atomically by the receiver.
    case batch(DeltaBatch)
    /// The sender has sent everything the receiver lacked at handshake time.
    case caughtUp(VersionVector)
    /// The receiver's version vector after applying batches.
    case ack(VersionVector)
    case ping(UInt64)
    case pong(UInt64)
    /// Protocol 9: one side's stamps of an origin's numbers, when the two hold different
    /// histories under it (docs/PROTOCOL.md §5, "Histories that forked").
    case history(HistoryStamps)
    /// The sender is closing the session, and why.
    case error(ProtocolErrorCode, String)
    /// Pairing (docs/PROTOCOL.md §9), instead of HELLO: the joining machine's SPAKE2 message.
    case pairStart(PairStart)
    /// The inviting machine's SPAKE2 message and its key confirmation.
    case pairReply(message: [UInt8], confirmation: [UInt8])
    /// The joining machine's key confirmation.
    case pairConfirm([UInt8])
    /// What the joined machine needs to become a replica of the household.
    case pairWelcome(PairWelcome)

    public struct PairStart: Sendable, Hashable {
        public static let currentVersion: UInt16 = 1
        public var version: UInt16
        /// SPAKE2 message, 32 bytes.
        public var message: [UInt8]
        /// The joining machine's name (its host name), ≤ 100 characters.
        public var name: String

        public init(version: UInt16 = PairStart.currentVersion, message: [UInt8], name: String) {
            self.version = version
            self.message = message
            self.name = name
        }
    }

    public struct PairWelcome: Sendable, Hashable {
        public var householdID: String
        public var householdName: String
        /// The household secret (32 bytes): the HELLO proof's key.
        public var secret: [UInt8]
        /// The current key of the household's advertisements (32 bytes).
        public var discoveryKey: [UInt8]
        /// The member the joined machine belongs to, if the inviter named one.
        public var memberID: String?
        /// The inviting machine's name.
        public var inviterName: String

        public init(
            householdID: String, householdName: String, secret: [UInt8], discoveryKey: [UInt8], memberID: String?,
            inviterName: String
        ) {
            self.householdID = householdID
            self.householdName = householdName
            self.secret = secret
            self.discoveryKey = discoveryKey
            self.memberID = memberID
            self.inviterName = inviterName
        }
    }

    public struct Hello: Sendable, Hashable {
        /// The version this agent sends. Version 2 adds the sender's wall clock; version 3
        /// (same HELLO) adds per-machine trust: the machine entities and pairing; version 4
        /// (same HELLO) adds the backlog item's `position` field; version 5 (same HELLO) adds
        /// the household's kids' PIN (entity 16); 6 members' languages; 7 phones (entity 17); 8 the household CA's
        /// roots and grants and where agents serve phones (entities 18–20); 9 (the last flag day)
        /// negotiates versions, keeps what it does not know (an open schema), and tells histories
        /// that forked apart (VECTOR entries with stamps and seals, BATCH stubs, HISTORY).
        public static let currentVersion: UInt16 = supportedVersions.upperBound
        /// The versions this agent accepts (it answers in the client's). A version 4 peer
        /// would refuse a batch holding an entity it does not know: it must upgrade.
        ///
        /// 9 only — unless the environment's `PULSE_PEER_TEST_PROTOCOL` names another number:
        /// the tests of two releases in one household start an agent that speaks another
        /// version that way (an agent speaking a version it does not implement only ever
        /// meets refusals: it is no way in).
        public static let supportedVersions: ClosedRange<UInt16> = {
            if let text = getenv("PULSE_PEER_TEST_PROTOCOL").map({ String(cString: $0) }), let version = UInt16(text), version > 0 {
                return version...version
            }
            return 9...9
        }()
        /// What an ERROR 2 says of the versions its sender speaks ("… (this agent speaks 7–8)",
        /// as ``SessionStateMachine`` writes it; "8" alone too); nil when it does not say.
        public static func spokenVersions(in reason: String) -> ClosedRange<UInt16>? {
            guard let start = reason.firstRange(of: "speaks ")?.upperBound else { return nil }
            let digits = reason[start...].prefix { ($0.isASCII && $0.isNumber) || $0 == "–" || $0 == "-" }
            let bounds = digits.split(whereSeparator: { $0 == "–" || $0 == "-" }).compactMap { UInt16($0) }
            switch bounds.count {
            case 1: return bounds[0]...bounds[0]
            case 2 where bounds[0] <= bounds[1]: return bounds[0]...bounds[1]
            default: return nil
            }
        }

        public var version: UInt16
        public var replica: ReplicaID
        /// HMAC-SHA256 membership proof (``MembershipProof``), 32 bytes.
        public var proof: [UInt8]
        /// Version 2: the sender's wall clock when it sent HELLO, Unix milliseconds.
        public var clock: Int64?
        /// Version 9: the release the sender runs ("0.10.0"), shown in the peer's status; at
        /// most ``maxReleaseBytes`` of `0–9 a–z A–Z . + ~ -`.
        public var release: String?
        public static let maxReleaseBytes = 64

        public init(version: UInt16 = Hello.currentVersion, replica: ReplicaID, proof: [UInt8], clock: Int64? = nil, release: String? = nil) {
            self.version = version
            self.replica = replica
            self.proof = proof
            self.clock = version >= 2 ? clock ?? 0 : nil
            self.release = version >= 9 ? release.flatMap(Self.validRelease) : nil
        }

        /// The release name as HELLO carries it, or nil when it is not one.
        public static func validRelease(_ text: String) -> String? {
            let allowed = text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || ".+~-".utf8.contains($0) }
            return !text.isEmpty && text.utf8.count <= maxReleaseBytes && allowed ? text : nil
        }
    }

    package var typeCode: UInt8 {
        switch self {
        case .hello: 1
        case .vector: 2
        case .batch: 3
        case .caughtUp: 4
        case .ack: 5
        case .ping: 6
        case .pong: 7
        case .error: 8
        case .history: 9
        case .pairStart: 10
        case .pairReply: 11
        case .pairConfirm: 12
        case .pairWelcome: 13
        }
    }
}

public enum ProtocolErrorCode: UInt16, Sendable, Hashable {
    case malformed = 1
    case unsupportedVersion = 2
    case notAMember = 3
    case unexpectedMessage = 4
    case rejectedBatch = 5
    case duplicateSession = 6
    case timeout = 7
    case shuttingDown = 8
    case selfConnection = 9
    case unknown = 0xFFFF
}

/// Hard limits on what a peer may send; anything beyond is a protocol error.
public enum WireLimits {
    public static let maxFrameBytes = 4 * 1024 * 1024
    public static let maxStringBytes = 4096
    public static let maxChangesPerBatch = 10_000
    public static let maxCoveragePerBatch = 4096
    public static let maxVectorEntries = 4096
    /// Protocol 9: stubs per BATCH, stamps per HISTORY.
    public static let maxStubsPerBatch = 10_000
    public static let maxStampsPerHistory = 65_536
    public static let proofBytes = 32
    /// Before a HELLO (or a pairing message) has been accepted, a frame may be no larger
    /// than this: a stranger cannot make us buffer more (docs/SECURITY.md).
    public static let maxUnauthenticatedFrameBytes = 512
    public static let spakeMessageBytes = 32
    public static let confirmationBytes = 32
    public static let maxMachineNameBytes = 400
}
