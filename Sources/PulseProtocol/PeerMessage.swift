import PulseModel
/// The messages two agents exchange (docs/PROTOCOL.md). Plain values: the protocol
/// layer knows the model and nothing of the store, the network or Avahi.
public enum PeerMessage: Sendable, Hashable {
    /// First message of each side. The server answers only after checking the client's proof.
    case hello(Hello)
    /// "This is what I have": sent once by each side right after the handshake.
    case vector(VersionVector)
    /// Changes and the coverage they bring, applied atomically by the receiver.
    case batch(DeltaBatch)
    /// The sender has sent everything the receiver lacked at handshake time.
    case caughtUp(VersionVector)
    /// The receiver's version vector after applying batches.
    case ack(VersionVector)
    case ping(UInt64)
    case pong(UInt64)
    /// The sender is closing the session, and why.
    case error(ProtocolErrorCode, String)

    public struct Hello: Sendable, Hashable {
        /// The version this agent sends. Version 2 adds the sender's wall clock.
        public static let currentVersion: UInt16 = 2
        /// The versions this agent accepts (it answers in the client's).
        public static let supportedVersions: ClosedRange<UInt16> = 1...2
        public var version: UInt16
        public var replica: ReplicaID
        /// HMAC-SHA256 membership proof (``MembershipProof``), 32 bytes.
        public var proof: [UInt8]
        /// Version 2: the sender's wall clock when it sent HELLO, Unix milliseconds.
        public var clock: Int64?

        public init(version: UInt16 = Hello.currentVersion, replica: ReplicaID, proof: [UInt8], clock: Int64? = nil) {
            self.version = version
            self.replica = replica
            self.proof = proof
            self.clock = version >= 2 ? clock ?? 0 : nil
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
    public static let proofBytes = 32
}
