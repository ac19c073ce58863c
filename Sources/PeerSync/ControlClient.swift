import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseHousehold

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
        let response = try request(
            ControlRequest(op: "wait", until: condition, timeoutMilliseconds: timeout * 1000),
            home: home, timeout: timeout + 5)
        guard response.ok, let status = response.status else { throw Failure.failed(response.error?.message ?? "no status") }
        return status
    }

    public static func status(home: HouseholdHome) throws -> AgentStatus {
        let response = try request(ControlRequest(op: "status"), home: home)
        guard response.ok, let status = response.status else { throw Failure.failed(response.error?.message ?? "no status") }
        return status
    }

    /// Tells a running agent that the database changed (best effort: without an agent,
    /// peers get the change at the next connection): a byte into its pipe
    /// (``ChangeNotices``), or, for an agent of an earlier release, the `changed` request,
    /// whose answer carries nothing and is not awaited. Either way the writer goes on while
    /// the agent pushes (the notice is in the kernel before this returns).
    public static func notifyChanged(home: HouseholdHome) {
        if ChangeNotices.send(home: home) { return }
        if let fd = try? send(ControlRequest(op: "changed"), home: home, timeout: 2) { close(fd) }
    }

    /// `subscribe`: calls `onAnswer` with the agent's answer (token, gap), then `onEvent` with
    /// each event line as it arrives, until the agent ends the stream (it stopped, or this
    /// client fell behind). Blocks; returns normally when the stream ends.
    public static func subscribe(
        topics: [String], resume: String?, home: HouseholdHome,
        onAnswer: (ControlResponse) throws -> Void, onEvent: (Data) throws -> Void
    ) throws {
        let fd = try send(ControlRequest(op: "subscribe", topics: topics, resume: resume), home: home, timeout: 5)
        defer { close(fd) }
        var none = timeval(tv_sec: 0, tv_usec: 0) // no receive timeout: events come when they come
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        var pending = Data()
        var answered = false
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending.append(contentsOf: chunk[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(pending[pending.startIndex..<newline])
                pending.removeSubrange(pending.startIndex...newline)
                if answered {
                    try onEvent(line)
                } else {
                    answered = true
                    let answer: ControlResponse
                    do { answer = try JSONDecoder().decode(ControlResponse.self, from: line) } catch {
                        throw Failure.failed("the agent's answer was not understood: \(error)")
                    }
                    guard answer.ok else { throw Failure.failed(answer.error?.message ?? "the agent refused the subscription") }
                    try onAnswer(answer)
                }
            }
        }
        if !answered { throw Failure.failed("the agent closed the connection without answering") }
    }
}
