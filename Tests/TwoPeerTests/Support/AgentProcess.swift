import Foundation

/// A running `pulse-peer run` with its own home directory. Started on loopback with
/// an ephemeral port; `init` returns once the agent printed its ready line. Killed
/// when released, so a failing test leaves no process behind.
final class AgentProcess: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let home: String
    let process = Process()
    private(set) var port = 0
    /// The web page's address (`--web 127.0.0.1:0` unless the test gives `--web`).
    private(set) var web: String?
    private let lock = NSLock()
    private var stderrLines: [String] = []
    private let newLine = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    /// `pulse-peer run --home HOME --port 0 --listen LISTEN ARGS…`, inside `host`'s
    /// network namespace when one is given (else with mDNS off: tests never touch the
    /// machine's own Avahi).
    /// `web`: the `--web` value (nil: the agent's default), unless `args` has its own.
    init(
        home: String, _ args: [String] = [], on host: TestHost? = nil, listen: String = "127.0.0.1",
        wrapper: [String] = [], web: String? = "127.0.0.1:0", environment: [String: String] = [:], timeout: TimeInterval = 30,
        binary: String? = nil
    ) throws {
        self.home = home
        let run =
            ["run", "--home", home, "--port", "0", "--listen", listen] + (host == nil ? ["--no-mdns"] : [])
            + (args.contains("--web") ? [] : web.map { ["--web", $0] } ?? []) + args
        let command = wrapper + [binary ?? PulsePeer.executable.path] + run
        if let host {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = host.wrap(command)
        } else {
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "PULSE_HOME")
        // English unless a test says otherwise, whatever the machine's locale.
        for key in ["PULSE_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES"] { env.removeValue(forKey: key) }
        env["LANG"] = "C.UTF-8"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var readyLine: String?
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        Self.readLines(out.fileHandleForReading) { line in
            if readyLine == nil, line.contains("\"event\":\"ready\"") {
                readyLine = line
                ready.signal()
            }
        }
        Self.readLines(err.fileHandleForReading) { [weak self] line in
            guard let self else { return }
            self.lock.withLock { self.stderrLines.append(line) }
            self.newLine.signal()
        }
        guard ready.wait(timeout: .now() + timeout) == .success, let line = readyLine,
            let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let port = json["port"] as? Int
        else {
            kill9()
            throw Failure(description: "agent for \(home) did not get ready: \(log)")
        }
        self.port = port
        self.web = json["web"] as? String
    }

    deinit { if process.isRunning { kill9() } }

    var address: String { "127.0.0.1:\(port)" }

    var log: String { lock.withLock { stderrLines.joined(separator: "\n") } }
    var logLineCount: Int { lock.withLock { stderrLines.count } }
    func logLines(from index: Int = 0) -> [String] { lock.withLock { Array(stderrLines[min(index, stderrLines.count)...]) } }

    /// Waits until a log line (from line `index` on) contains `text`.
    func waitForLog(_ text: String, from index: Int = 0, timeout: TimeInterval = 30) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while true {
            if logLines(from: index).contains(where: { $0.contains(text) }) { return true }
            guard newLine.wait(timeout: deadline) == .success else { return false }
        }
    }

    /// SIGTERM, then waits for a graceful exit; returns the exit status.
    @discardableResult
    func stop(timeout: TimeInterval = 20) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        if exited.wait(timeout: .now() + timeout) == .timedOut { kill9() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// kill -9: no chance to clean up.
    func kill9() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Calls `body` with each line `handle` yields, on a thread of its own, until EOF.
    static func readLines(_ handle: FileHandle, _ body: @escaping @Sendable (String) -> Void) {
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    body(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
        }
    }
}

/// Helpers over the CLI for one home.
struct Home {
    let path: String
    /// A command every command runs under (e.g. ``FakeTime/offset(_:)``).
    var wrapper: [String] = []
    /// Variables every command runs with (e.g. `LANG`).
    var environment: [String: String] = [:]
    /// Another build's `pulse-peer` every command runs (the "next" test release), or nil.
    var binary: String?

    /// `orFail: false`: return a failed command's result instead of throwing.
    @discardableResult
    func run(_ args: [String], stdin: String? = nil, orFail: Bool = true) throws -> PulsePeer.Result {
        let result = try PulsePeer.run(args + ["--home", path], stdin: stdin, environment: environment, wrapper: wrapper, binary: binary)
        if orFail && result.status != 0 {
            throw AgentProcess.Failure(description: "pulse-peer \(args.joined(separator: " ")) failed: \(result.stderr)")
        }
        return result
    }

    func export() throws -> String { try run(["export", "--json"]).stdout }

    func shoppingNames() throws -> [String] {
        let data = Data(try run(["shop", "list", "--json"]).stdout.utf8)
        let items = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
        return items.compactMap { $0["name"] as? String }
    }

    /// The changes from peers the running agent applied since it started (`status --json`).
    func appliedChanges() throws -> Int {
        let status = try JSONSerialization.jsonObject(with: Data(try run(["status", "--json"]).stdout.utf8)) as? [String: Any]
        return (status?["machine"] as? [String: Any])?["appliedChanges"] as? Int ?? 0
    }

    /// Blocks until the running agent reports `condition` (event-driven, in the agent).
    /// `orFail: false`: return the status reached at the timeout instead of failing.
    @discardableResult
    func waitUntil(_ condition: String, peers: Int = 1, timeout: Int = 60, orFail: Bool = true) throws -> [String: Any] {
        let args = ["status", "--json", "--wait", condition, "--peers", String(peers), "--timeout", String(timeout)]
        let result = orFail ? try run(args) : try PulsePeer.run(args + ["--home", path], wrapper: wrapper, binary: binary)
        if !orFail && result.status != 0 {
            return try JSONSerialization.jsonObject(with: Data(run(["status", "--json"]).stdout.utf8)) as? [String: Any] ?? [:]
        }
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
    }
}

extension Scratch {
    /// A household created in the first home and joined by pairing from the others
    /// (through a short-lived agent of the first).
    func household(_ names: String...) throws -> [Home] {
        let homes = names.map { Home(path: home($0)) }
        try homes[0].run(["init"])
        guard homes.count > 1 else { return homes }
        let agent = try AgentProcess(home: homes[0].path)
        defer { _ = agent.stop() }
        for home in homes.dropFirst() { try home.pair(with: homes[0], at: agent) }
        return homes
    }
}

extension Scratch {
    /// A household of homes "a" and "b", each with its running agent (B's knows A's
    /// address), in step; `bFor`: the member B's computer is then set to (`whoami --set`).
    func twoAgents(bFor member: String? = nil) throws -> (Home, Home, AgentProcess, AgentProcess) {
        let homes = try household("a", "b")
        let agentA = try AgentProcess(home: homes[0].path)
        let agentB = try AgentProcess(home: homes[1].path, ["--peer", agentA.address])
        try homes[1].waitUntil("synced")
        if let member { try homes[1].run(["whoami", "--set", member]) }
        return (homes[0], homes[1], agentA, agentB)
    }
}

extension Home {
    /// `invite` on `inviter` (whose agent is `agent`), then `join CODE --peer` here.
    func pair(with inviter: Home, at agent: AgentProcess, member: String? = nil) throws {
        let code = try inviter.run(["invite"] + (member.map { ["--member", $0] } ?? [])).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try run(["join", code, "--peer", agent.address])
    }
}

/// libfaketime (Debian's `faketime`): a process whose clock is wrong by a fixed offset
/// (wall clock and monotonic alike), with the process's own pid (signals reach it).
///
/// Measured here: a Swift binary started with `LD_PRELOAD` set lost its arguments (the
/// library's start-up `setenv` moves the environment), and the `faketime` command forks,
/// so killing it orphans the program. Preloading a shell that `exec`s the program avoids
/// both: the shell does the start-up, the program inherits it under the same pid.
enum FakeTime {
    static let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
    static var available: Bool { FileManager.default.fileExists(atPath: library) }

    /// The wrapper of a process whose clock runs `offset` ahead ("+15m") or behind ("-1h").
    static func offset(_ offset: String) -> [String] {
        ["/usr/bin/env", "LD_PRELOAD=\(library)", "FAKETIME=\(offset)", "/bin/sh", "-c", "exec \"$@\"", "sh"]
    }

    /// Removes the shared-memory files libfaketime leaves in /dev/shm for processes gone.
    static func removeLeftovers() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []
        for name in names where name.hasPrefix("faketime_shm_") || name.hasPrefix("sem.faketime_sem_") {
            guard let pid = Int32(name.split(separator: "_").last ?? ""), kill(pid, 0) != 0 else { continue }
            try? FileManager.default.removeItem(atPath: "/dev/shm/" + name)
        }
    }
}

/// Re-checks `condition` (a query of real processes: the CLI, a status) every 100 ms until
/// it holds or `timeout` seconds pass; true when it held. For conditions no agent can wait
/// on for us (`Home.waitUntil` is the event-driven wait for sync states).
func eventually(timeout: TimeInterval, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        Thread.sleep(forTimeInterval: 0.1)
    }
}

extension Home {
    /// `status --json`, parsed.
    func status() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(run(["status", "--json"]).stdout.utf8)) as? [String: Any] ?? [:]
    }

    /// The machine's warnings in `status --json` (empty when no agent answers).
    func warnings() -> [String] {
        ((try? status())?["machine"] as? [String: Any])?["warnings"] as? [String] ?? []
    }
}

/// A TCP port on 127.0.0.1 held by the test process itself (listening, never accepting),
/// until released. A fixed port such as the web page's default (47654) lies inside
/// Linux's ephemeral range, so another test's outbound connection or `--port 0` listener
/// may hold it for a moment: `take` waits for it with a deadline.
final class HeldPort {
    let port: UInt16
    private var descriptor: Int32

    private init(port: UInt16, descriptor: Int32) {
        self.port = port
        self.descriptor = descriptor
    }

    /// Binds and listens on 127.0.0.1:`port`, retrying while it is in use, up to `timeout`.
    static func take(_ port: UInt16, timeout: TimeInterval = 30) throws -> HeldPort {
        let deadline = Date().addingTimeInterval(timeout)
        var lastError: Int32 = 0
        repeat {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw AgentProcess.Failure(description: "socket(): errno \(errno)") }
            // As servers do (NIO's included): a connection of the past in TIME_WAIT does not
            // block the port; a live listener or connection still does.
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if bound == 0, listen(fd, 1) == 0 { return HeldPort(port: port, descriptor: fd) }
            lastError = errno
            close(fd)
            Thread.sleep(forTimeInterval: 0.1) // the re-check interval of a wait with a deadline
        } while Date() < deadline
        throw AgentProcess.Failure(description: "127.0.0.1:\(port) stayed in use for \(Int(timeout)) s (errno \(lastError))")
    }

    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

extension Home {
    /// One method of the running agent's local API (the control socket, as a page or an app
    /// calls it): the answer's `result`, or the refusal thrown with its message.
    @discardableResult
    func api(_ method: String, _ params: [String: Any] = [:]) throws -> Any? {
        let request = try JSONSerialization.data(withJSONObject: ["op": "call", "method": method, "params": params])
        let raw = try Shell.run([
            "python3", "-c",
            """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1])
            s.sendall(sys.argv[2].encode() + b"\\n")
            data = b""
            while not data.endswith(b"\\n"):
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            sys.stdout.write(data.decode())
            """, path + "/control.sock", String(decoding: request, as: UTF8.self),
        ])
        guard let answer = try JSONSerialization.jsonObject(with: Data(raw.stdout.utf8)) as? [String: Any] else {
            throw AgentProcess.Failure(description: "\(method): no answer: \(raw.stderr)")
        }
        guard answer["ok"] as? Bool == true else {
            throw AgentProcess.Failure(description: "\(method) refused: \(answer["error"] ?? answer)")
        }
        return answer["result"]
    }
}
