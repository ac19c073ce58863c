import NIOCore
import NIOPosix
import NIOSSL
import PulseModel
import PulseProtocol

/// One TCP+TLS connection to another agent, carrying framed ``PeerMessage``s.
public struct PeerChannel: Sendable {
    public let channel: NIOAsyncChannel<PeerMessage, PeerMessage>
    /// The peer's machine id (SHA-256 of its certificate key), once TLS has seen it.
    public let peerMachine: EventLoopFuture<[UInt8]>
    public let bytes: ByteCounts
    /// The largest frame accepted now (small until the session authenticates the peer).
    public let frameLimit: FrameLimit
    /// The place this connection holds among the unauthenticated ones (inbound only);
    /// given back when the session authenticates the peer, or when the connection closes.
    public let admission: AdmissionTicket?

    /// The peer proved itself: full-size frames, and it no longer counts as unauthenticated.
    public func authenticated() {
        frameLimit.authenticated()
        admission?.release()
    }

    public var remoteAddress: String {
        channel.channel.remoteAddress.map(PeerTransport.describe) ?? "unknown"
    }
}

/// Listening and dialing. Knows the protocol's framing, never the store.
public enum PeerTransport {
    /// Binds `host:port` (port 0: any free port) and yields one ``PeerChannel`` per
    /// accepted connection.
    /// Connections not yet authenticated beyond `admission`'s limits are closed at once.
    public static func listen(
        host: String, port: Int, tls: PeerTLS, admission: AdmissionControl = AdmissionControl(),
        group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws
        -> NIOAsyncChannel<PeerChannel, Never>
    {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let ticket = admission.admit(channel.remoteAddress?.ipAddress ?? "?") else {
                        // Closed here: a failed initializer alone leaves the socket open and never
                        // read (the stranger's FIN unseen: CLOSE-WAIT, a descriptor held for good).
                        channel.close(promise: nil)
                        throw TransportError.tooManyUnauthenticated
                    }
                    channel.closeFuture.whenComplete { _ in ticket.release() }
                    let machine = channel.eventLoop.makePromise(of: [UInt8].self)
                    let handler = NIOSSLServerHandler(
                        context: tls.serverContext,
                        customVerificationCallback: PeerTLS.recordingPeer(into: machine))
                    let counts = ByteCounts()
                    try channel.pipeline.syncOperations.addHandler(ByteCountingHandler(counts, wire: true))
                    try channel.pipeline.syncOperations.addHandler(handler)
                    return try wrap(channel, machine: machine, counts: counts, admission: ticket)
                }
            }
    }

    /// Connects to `host:port`, failing after `timeout`.
    public static func connect(
        host: String, port: Int, tls: PeerTLS, timeout: TimeAmount = .seconds(5),
        group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> PeerChannel {
        try await ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let machine = channel.eventLoop.makePromise(of: [UInt8].self)
                    let handler = try NIOSSLClientHandler(
                        context: tls.clientContext, serverHostname: nil,
                        customVerificationCallback: PeerTLS.recordingPeer(into: machine))
                    let counts = ByteCounts()
                    try channel.pipeline.syncOperations.addHandler(ByteCountingHandler(counts, wire: true))
                    try channel.pipeline.syncOperations.addHandler(handler)
                    return try wrap(channel, machine: machine, counts: counts, admission: nil)
                }
            }
    }

    private static func wrap(
        _ channel: Channel, machine: EventLoopPromise<[UInt8]>, counts: ByteCounts,
        admission: AdmissionTicket?
    ) throws -> PeerChannel {
        // A connection that dies before TLS saw a certificate must not leave the promise open.
        channel.closeFuture.whenComplete { _ in machine.fail(TransportError.closedBeforeHandshake) }
        try channel.pipeline.syncOperations.addHandler(ByteCountingHandler(counts, wire: false))
        let limit = FrameLimit()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(PeerFrameDecoder(limit: limit)))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(PeerFrameEncoder()))
        try channel.pipeline.syncOperations.addHandler(FarewellGate())
        let async = try NIOAsyncChannel<PeerMessage, PeerMessage>(wrappingChannelSynchronously: channel)
        return PeerChannel(channel: async, peerMachine: machine.futureResult, bytes: counts, frameLimit: limit, admission: admission)
    }

    package static func describe(_ address: SocketAddress) -> String {
        switch address {
        case let .v6(v6): "[\(address.ipAddress ?? "?")]:\(v6.address.sin6_port.bigEndian)"
        default: "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        }
    }
}
