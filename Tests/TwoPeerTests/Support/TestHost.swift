import Foundation
import PeerSync

/// A test host: a network namespace with its own system bus and avahi-daemon, so mDNS
/// tests run hermetically (nothing is announced outside the namespaces) and can restart
/// the daemon at will. Needs CAP_NET_ADMIN and CAP_SYS_ADMIN; `TestHost.available`
/// tells whether this machine allows it (tests are disabled, with the reason, if not).
final class TestHost: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let name: String
    let dir: URL
    private var dbus: SpawnedProcess?
    private var avahi: SpawnedProcess?
    private let lock = NSLock()
    private var avahiLog: [String] = []
    private let avahiLine = DispatchSemaphore(value: 0)

    var busAddress: String { "unix:path=\(dir.path)/bus.sock" }

    /// Whether network namespaces can be made here (checked once).
    static let available: Bool = {
        let probe = "hp-probe-\(getpid())"
        guard (try? shell(["ip", "netns", "add", probe])) != nil else { return false }
        _ = try? shell(["ip", "netns", "del", probe])
        return FileManager.default.isExecutableFile(atPath: "/usr/sbin/avahi-daemon")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
    }()

    static let unavailableReason =
        "needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) to make network namespaces, and avahi-daemon + dbus-daemon (scripts/setup.sh installs them)"

    /// A namespace with loopback up, its bus and its avahi-daemon running.
    init(label: String) throws {
        name = "hp\(label)\(UInt32.random(in: 0...0xFFFFF))"
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("testhost-\(name)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("avahi-run"), withIntermediateDirectories: true)
        try Self.shell(["ip", "netns", "add", name])
        try Self.shell(["ip", "-n", name, "link", "set", "lo", "up"])
        let config = """
            [server]
            host-name=\(name)
            use-ipv6=no
            enable-dbus=yes
            ratelimit-interval-usec=0
            [wide-area]
            enable-wide-area=no
            [publish]
            publish-workstation=no
            publish-hinfo=no
            """
        try config.write(to: dir.appendingPathComponent("avahi-daemon.conf"), atomically: true, encoding: .utf8)
        try startBus()
        try startAvahi()
    }

    deinit {
        stopAvahi()
        dbus?.terminate()
        _ = try? Self.shell(["ip", "netns", "del", name])
        try? FileManager.default.removeItem(at: dir)
    }

    /// `env DBUS_SYSTEM_BUS_ADDRESS=… ip netns exec NAME command…`, for /usr/bin/env.
    func wrap(_ command: [String]) -> [String] {
        ["ip", "netns", "exec", name, "env", "DBUS_SYSTEM_BUS_ADDRESS=\(busAddress)"] + command
    }

    /// Runs a command inside the namespace to completion.
    @discardableResult
    func run(_ command: [String]) throws -> String { try Self.shell(wrap(command)) }

    // The daemons are started with posix_spawn, not Foundation's Process: Process learns
    // of a child's exit through a descriptor the child inherits, and avahi-daemon closes
    // every inherited descriptor at start; Process would then block its reaper thread in
    // wait4() on a daemon that never exits, and stall every other Process of the tests.

    private func startBus() throws {
        let process = try SpawnedProcess([
            "ip", "netns", "exec", name, "dbus-daemon", "--system", "--address=\(busAddress)",
            "--nofork", "--nopidfile", "--print-address",
        ])
        dbus = process
        // It prints its address once it listens.
        guard process.output.availableData.isEmpty == false else { throw Failure(description: "dbus-daemon did not start in \(name)") }
    }

    /// Starts avahi-daemon (in the foreground, logging to a pipe) and waits until it runs.
    func startAvahi(timeout: TimeInterval = 20) throws {
        // Its own /run/avahi-daemon (pid file, socket): a bind mount in the private mount
        // namespace that `ip netns exec` gives every command.
        let process = try SpawnedProcess(
            wrap([
                "sh", "-c",
                "mkdir -p /run/avahi-daemon && mount --bind '\(dir.path)/avahi-run' /run/avahi-daemon && "
                    + "exec avahi-daemon --no-drop-root --no-chroot --debug -f '\(dir.path)/avahi-daemon.conf'",
            ]))
        avahi = process
        AgentProcess.readLines(process.output) { [weak self] line in
            guard let self else { return }
            self.lock.withLock { self.avahiLog.append(line) }
            self.avahiLine.signal()
        }
        let deadline = DispatchTime.now() + timeout
        let mark = lock.withLock { avahiLog.count }
        while !lock.withLock({ avahiLog[mark...].contains { $0.contains("Server startup complete") } }) {
            guard avahiLine.wait(timeout: deadline) == .success else {
                throw Failure(description: "avahi-daemon did not start in \(name): \(lock.withLock { avahiLog.suffix(5) })")
            }
        }
    }

    /// Stops avahi-daemon and waits for it to exit.
    func stopAvahi() {
        avahi?.terminate()
        avahi = nil
    }

    /// Joins two hosts with a veth pair on 10.77.`subnet`.0/24 (.1 and .2).
    static func link(_ a: TestHost, _ b: TestHost, subnet: Int) throws {
        let left = "v\(a.name.suffix(6))a", right = "v\(b.name.suffix(6))b"
        try shell(["ip", "link", "add", left, "type", "veth", "peer", "name", right])
        try shell(["ip", "link", "set", left, "netns", a.name])
        try shell(["ip", "link", "set", right, "netns", b.name])
        try shell(["ip", "-n", a.name, "addr", "add", "10.77.\(subnet).1/24", "dev", left])
        try shell(["ip", "-n", b.name, "addr", "add", "10.77.\(subnet).2/24", "dev", right])
        try shell(["ip", "-n", a.name, "link", "set", left, "up"])
        try shell(["ip", "-n", b.name, "link", "set", right, "up"])
    }

    // MARK: A LAN of several hosts, and its faults

    /// This host's interface on a ``LAN``.
    static let lanInterface = "lan0"

    /// Takes this host off the LAN (its cable pulled: the interface goes down, nothing is
    /// sent or received, and nobody is told).
    func cut() throws { try Self.shell(["ip", "-n", name, "link", "set", Self.lanInterface, "down"]) }

    /// Puts this host back on the LAN.
    func heal() throws { try Self.shell(["ip", "-n", name, "link", "set", Self.lanInterface, "up"]) }

    /// Makes this host's LAN link lossy (both directions) and, where the kernel has netem,
    /// slow; returns what was applied. Without netem (some container kernels lack the
    /// module), loss comes from an nftables rule that drops packets at random.
    @discardableResult
    func degrade(lossPercent: Int, delayMilliseconds: Int) throws -> String {
        let netem = [
            "tc", "-n", name, "qdisc", "replace", "dev", Self.lanInterface, "root", "netem",
            "delay", "\(delayMilliseconds)ms", "loss", "\(lossPercent)%",
        ]
        if (try? Self.shell(netem)) != nil { return "netem: \(lossPercent)% loss, \(delayMilliseconds) ms delay" }
        try run(["nft", "add", "table", "inet", "lossy"])
        for hook in ["input", "output"] {
            try run(["nft", "add chain inet lossy \(hook) { type filter hook \(hook) priority 0; }"])
            try run([
                "nft", "add", "rule", "inet", "lossy", hook, hook == "input" ? "iifname" : "oifname", Self.lanInterface,
                "numgen", "random", "mod", "100", "<", "\(lossPercent)", "drop",
            ])
        }
        return "nftables: \(lossPercent)% loss each way (no netem here: no delay)"
    }

    /// Undoes ``degrade(lossPercent:delayMilliseconds:)``.
    func restore() throws {
        _ = try? Self.shell(["tc", "-n", name, "qdisc", "del", "dev", Self.lanInterface, "root"])
        _ = try? run(["nft", "delete", "table", "inet", "lossy"])
    }

    @discardableResult
    static func shell(_ command: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(command.joined(separator: " ")) failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// A child started with posix_spawn, its standard output and error on one pipe. Reaped
/// by `terminate()` (SIGTERM, then waitpid).
final class SpawnedProcess: @unchecked Sendable {
    let pid: pid_t
    let output: FileHandle
    private var reaped = false

    init(_ arguments: [String]) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw TestHost.Failure(description: "pipe failed") }
        // Subprocess gives the child an empty signal mask and default handlers: the calling
        // thread (a dispatch worker) blocks signals, and a child inheriting that ignores SIGTERM.
        let spawned = Subprocess.spawn(
            "/usr/bin/env", arguments, stdin: .null, stdout: .descriptor(fds[1]), stderr: .descriptor(fds[1]),
            closing: [fds[0], fds[1]])
        close(fds[1])
        guard case let .success(child) = spawned else {
            close(fds[0])
            throw TestHost.Failure(description: "cannot start \(arguments.first ?? ""): \(spawned)")
        }
        pid = child
        output = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
    }

    func terminate() {
        guard !reaped else { return }
        reaped = true
        kill(pid, SIGTERM)
        _ = Subprocess.wait(pid)
    }

    deinit { terminate() }
}

/// A switch: a namespace holding a bridge, with one veth to each host (`lan0` there,
/// 10.77.`subnet`.N/24 with N = 1, 2, …). Removed with its namespace.
final class LAN: @unchecked Sendable {
    let name: String
    private(set) var addresses: [String] = []

    init(_ hosts: [TestHost], subnet: Int) throws {
        name = "hpsw\(UInt32.random(in: 0...0xFFFFF))"
        try TestHost.shell(["ip", "netns", "add", name])
        try TestHost.shell(["ip", "-n", name, "link", "add", "br0", "type", "bridge"])
        try TestHost.shell(["ip", "-n", name, "link", "set", "br0", "up"])
        for (index, host) in hosts.enumerated() {
            let tag = "\(name.suffix(5))\(index)"
            try TestHost.shell(["ip", "link", "add", "h\(tag)", "type", "veth", "peer", "name", "s\(tag)"])
            try TestHost.shell(["ip", "link", "set", "h\(tag)", "netns", host.name])
            try TestHost.shell(["ip", "link", "set", "s\(tag)", "netns", name])
            try TestHost.shell(["ip", "-n", host.name, "link", "set", "h\(tag)", "name", TestHost.lanInterface])
            try TestHost.shell(["ip", "-n", name, "link", "set", "s\(tag)", "master", "br0"])
            try TestHost.shell(["ip", "-n", name, "link", "set", "s\(tag)", "up"])
            let address = "10.77.\(subnet).\(index + 1)"
            try TestHost.shell(["ip", "-n", host.name, "addr", "add", "\(address)/24", "dev", TestHost.lanInterface])
            try TestHost.shell(["ip", "-n", host.name, "link", "set", TestHost.lanInterface, "up"])
            addresses.append(address)
        }
    }

    deinit { _ = try? TestHost.shell(["ip", "netns", "del", name]) }
}
