import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import PulseProtocol
import PulseModel

/// Splits a byte stream into lines of at most `maxLength` bytes.
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    static let maxLength = 1 << 20

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maxLength { throw WireError("control request longer than \(Self.maxLength) bytes") }
            return .needMoreData
        }
        let line = buffer.readSlice(length: newline - buffer.readerIndex)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }
}

/// The owner-only Unix socket `control.sock` in the home directory.
enum ControlServer {
    static func bind(path: String, group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws
        -> NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never> {
        let server = try await ServerBootstrap(group: group)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder()))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        chmod(path, 0o600)
        return server
    }

    /// Serves connections until cancelled; `handle` answers each request.
    static func serve(_ server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, logger: Logger,
                      handle: @escaping @Sendable (ControlRequest) async -> ControlResponse) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask {
                        do {
                            try await connection.executeThenClose { lines, replies in
                                for try await line in lines {
                                    let response: ControlResponse
                                    if let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line.readableBytesView)) {
                                        response = await handle(request)
                                    } else {
                                        response = ControlResponse(ok: false, error: "a request is one JSON object per line, like {\"op\":\"status\"}")
                                    }
                                    var data = try JSONEncoder().encode(response)
                                    data.append(UInt8(ascii: "\n"))
                                    try await replies.write(ByteBuffer(bytes: data))
                                }
                            }
                        } catch {
                            logger.debug("control connection ended", metadata: ["error": "\(error)"])
                        }
                    }
                }
            }
        }
    }
}
