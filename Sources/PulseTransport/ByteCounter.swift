import NIOCore
import Synchronization
import PulseModel

/// Bytes a session moved, counted at two depths: on the socket (TLS records, the
/// handshake included) and as protocol frames (what the sync exchange itself costs).
public final class ByteCounts: Sendable {
    public struct Snapshot: Sendable, Codable, Equatable {
        public var wireIn = 0, wireOut = 0, framesIn = 0, framesOut = 0
    }
    private let counts = Mutex(Snapshot())
    public init() {}
    public var snapshot: Snapshot { counts.withLock { $0 } }
    package func add(wire: Bool, inbound: Bool, _ n: Int) {
        counts.withLock {
            switch (wire, inbound) {
            case (true, true): $0.wireIn += n
            case (true, false): $0.wireOut += n
            case (false, true): $0.framesIn += n
            case (false, false): $0.framesOut += n
            }
        }
    }
}

/// Counts the bytes passing through it; changes nothing.
package final class ByteCountingHandler: ChannelDuplexHandler, Sendable {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    package let counts: ByteCounts
    package let wire: Bool

    package init(_ counts: ByteCounts, wire: Bool) {
        self.counts = counts
        self.wire = wire
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        counts.add(wire: wire, inbound: true, unwrapInboundIn(data).readableBytes)
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        counts.add(wire: wire, inbound: false, unwrapOutboundIn(data).readableBytes)
        context.write(data, promise: promise)
    }
}
