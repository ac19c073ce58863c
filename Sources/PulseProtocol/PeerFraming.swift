import NIOCore
import Synchronization
import PulseModel

/// The largest frame a connection accepts right now: ``WireLimits/maxUnauthenticatedFrameBytes``
/// until the session says the peer is authenticated, then ``WireLimits/maxFrameBytes``.
/// Shared by the connection's decoder (event loop) and its session (a task).
public final class FrameLimit: Sendable {
    private let bytes: Atomic<Int>

    public init(authenticated: Bool = false) {
        bytes = Atomic(authenticated ? WireLimits.maxFrameBytes : WireLimits.maxUnauthenticatedFrameBytes)
    }

    public var current: Int { bytes.load(ordering: .relaxed) }

    /// The peer proved itself: full-size frames from now on.
    public func authenticated() { bytes.store(WireLimits.maxFrameBytes, ordering: .relaxed) }
}

/// Frames: a 4-byte big-endian length, then that many bytes of message (type + payload).
/// Frames of 0 bytes or over the connection's ``FrameLimit`` are refused as soon as their
/// length is read, before anything is buffered.
public struct PeerFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = PeerMessage
    private let limit: FrameLimit

    public init(limit: FrameLimit = FrameLimit(authenticated: true)) { self.limit = limit }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length: UInt32 = buffer.getInteger(at: buffer.readerIndex) else { return .needMoreData }
        let maximum = limit.current
        guard length > 0, length <= maximum else {
            throw WireError("frame of \(length) bytes (at most \(maximum)\(maximum < WireLimits.maxFrameBytes ? " before the handshake" : ""))")
        }
        guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        var payload = buffer.readSlice(length: Int(length))!
        let message = try WireCodec.decode(&payload)
        context.fireChannelRead(Self.wrapInboundOut(message))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 { throw WireError("connection closed in the middle of a frame") }
        return .needMoreData
    }
}

public struct PeerFrameEncoder: MessageToByteEncoder {
    public typealias OutboundIn = PeerMessage

    public init() {}

    public func encode(data: PeerMessage, out: inout ByteBuffer) throws {
        let start = out.writerIndex
        out.writeInteger(UInt32(0))
        WireCodec.encode(data, into: &out)
        let length = out.writerIndex - start - 4
        guard length <= WireLimits.maxFrameBytes else { throw WireError("message of \(length) bytes is too large to send") }
        out.setInteger(UInt32(length), at: start)
    }
}

/// PROTOCOL.md §5.8, "nothing follows an ERROR", kept for every path that writes: once an
/// ERROR went out on a connection, any later message (a second ERROR from another part of
/// the agent closing the same session, a BATCH already on its way) is dropped, its write
/// failed, and never reaches the peer. Sits before ``PeerFrameEncoder``.
public final class FarewellGate: ChannelOutboundHandler, RemovableChannelHandler {
    public typealias OutboundIn = PeerMessage
    public typealias OutboundOut = PeerMessage
    private var farewellSent = false

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !farewellSent else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        if case .error = unwrapOutboundIn(data) { farewellSent = true }
        context.write(data, promise: promise)
    }
}
