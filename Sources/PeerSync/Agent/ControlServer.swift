import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix

/// Requests on the local control socket: one JSON object per line, answered by one
/// JSON object per line (docs/API.md).
public struct ControlRequest: Sendable, Codable {
    public var op: String
    /// For `wait`: the condition (see ``WaitCondition``) and how long to wait.
    public var until: WaitCondition?
    public var timeoutMilliseconds: Int?
    /// For `call`: a household method (docs/API.md) and its parameters.
    public var method: String?
    public var params: [String: JSONValue]?

    public init(op: String, until: WaitCondition? = nil, timeoutMilliseconds: Int? = nil,
                method: String? = nil, params: [String: JSONValue]? = nil) {
        self.op = op
        self.until = until
        self.timeoutMilliseconds = timeoutMilliseconds
        self.method = method
        self.params = params
    }
}

/// What `wait` waits for, judged on the agent's status.
public struct WaitCondition: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// At least `peers` peers connected, and every connected peer in sync.
        case synced
        /// At least `peers` peers known, none connected.
        case disconnected
    }
    public var kind: Kind
    public var peers: Int

    public init(_ kind: Kind, peers: Int = 1) {
        self.kind = kind
        self.peers = peers
    }

    public func isMet(by status: AgentStatus) -> Bool {
        let connected = status.peers.filter { $0.state == .connected }
        switch kind {
        case .synced: return connected.count >= peers && connected.allSatisfy(\.inSync)
        case .disconnected: return status.peers.count >= peers && connected.isEmpty
        }
    }
}

public struct ControlResponse: Sendable, Codable {
    public var ok: Bool
    public var error: String?
    public var status: AgentStatus?
    public var result: JSONValue?

    public init(ok: Bool, error: String? = nil, status: AgentStatus? = nil, result: JSONValue? = nil) {
        self.ok = ok
        self.error = error
        self.status = status
        self.result = result
    }
}

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

/// The client side, for the CLI: a blocking request over the control socket.
public enum AgentControl {
    public static func socketPath(_ home: HouseholdHome) -> String {
        home.directory.appendingPathComponent("control.sock").path
    }

    public enum Failure: Error, CustomStringConvertible {
        case notRunning(String)
        case failed(String)
        public var description: String {
            switch self {
            case let .notRunning(home): "no agent is running for \(home) (start one with `pulse-peer run --home \(home)`)"
            case let .failed(message): message
            }
        }
    }

    /// Sends one request and waits (at most `timeout` seconds) for the answer.
    public static func request(_ request: ControlRequest, home: HouseholdHome, timeout: Int = 5) throws -> ControlResponse {
        let fd = try send(request, home: home, timeout: timeout)
        defer { close(fd) }
        var received = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !received.contains(UInt8(ascii: "\n")) {
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { throw Failure.failed("the agent did not answer within \(timeout) s") }
            received.append(contentsOf: chunk[0..<count])
        }
        let line = received.prefix(while: { $0 != UInt8(ascii: "\n") })
        do {
            return try JSONDecoder().decode(ControlResponse.self, from: line)
        } catch {
            throw Failure.failed("the agent's answer was not understood: \(error)")
        }
    }

    /// Connects and sends one request line; returns the open socket.
    private static func send(_ request: ControlRequest, home: HouseholdHome, timeout: Int) throws -> Int32 {
        let path = socketPath(home)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.failed("cannot create a socket") }
        var keep = false
        defer { if !keep { close(fd) } }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else { throw Failure.failed("the home path is too long for a control socket: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw Failure.notRunning(home.path) }
        var payload = try JSONEncoder().encode(request)
        payload.append(UInt8(ascii: "\n"))
        let sent = payload.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == payload.count else { throw Failure.failed("the agent did not take the request") }
        keep = true
        return fd
    }

    /// Waits (at most `timeout` seconds) until the agent's status meets `condition`.
    public static func wait(until condition: WaitCondition, timeout: Int, home: HouseholdHome) throws -> AgentStatus {
        let response = try request(ControlRequest(op: "wait", until: condition, timeoutMilliseconds: timeout * 1000),
                                   home: home, timeout: timeout + 5)
        guard response.ok, let status = response.status else { throw Failure.failed(response.error ?? "no status") }
        return status
    }

    public static func status(home: HouseholdHome) throws -> AgentStatus {
        let response = try request(ControlRequest(op: "status"), home: home)
        guard response.ok, let status = response.status else { throw Failure.failed(response.error ?? "no status") }
        return status
    }

    /// Tells a running agent that the database changed (best effort: without an agent,
    /// peers get the change at the next connection).
    /// The agent's answer carries nothing, so it is not awaited: the writer goes on while
    /// the agent pushes (the request is in the socket before this returns).
    public static func notifyChanged(home: HouseholdHome) {
        if let fd = try? send(ControlRequest(op: "changed"), home: home, timeout: 2) { close(fd) }
    }
}
