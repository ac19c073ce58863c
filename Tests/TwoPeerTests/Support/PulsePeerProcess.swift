import Foundation

/// Runs the built `pulse-peer` binary, as a person or a script would.
struct PulsePeer {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static var executable: URL {
        // On Linux the test bundle's main bundle is the products directory.
        Bundle.main.bundleURL.appendingPathComponent("pulse-peer")
    }

    /// Runs `pulse-peer args` to completion (killed after `timeout` seconds).
    @discardableResult
    /// `wrapper`: a command to run it under (`faketime -f +15m`).
    /// `binary`: another build's `pulse-peer` (the "next" test release: TwoReleasesTests).
    static func run(
        _ args: [String], stdin: String? = nil, environment: [String: String] = [:], wrapper: [String] = [],
        timeout: TimeInterval = 60, binary: String? = nil
    ) throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "PULSE_HOME")
        // English unless a test says otherwise, whatever the machine's locale.
        for key in ["PULSE_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES"] { env.removeValue(forKey: key) }
        env["LANG"] = "C.UTF-8"
        for (key, value) in environment { env[key] = value }
        return try runProcess(wrapper + [binary ?? executable.path] + args, stdin: stdin, environment: env, timeout: timeout)
    }

    /// Runs `command` (found on PATH when it has no slash) to completion: both pipes read
    /// to the end together (a full one would block the child), killed after `timeout` seconds.
    static func runProcess(
        _ command: [String], stdin: String? = nil, environment: [String: String]? = nil,
        timeout: TimeInterval
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0].contains("/") ? command[0] : "/usr/bin/env")
        process.arguments = command[0].contains("/") ? Array(command.dropFirst()) : command
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        if group.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            group.wait()
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// A temporary directory for one test's homes, removed at the end.
final class Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("twopeer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func home(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}
