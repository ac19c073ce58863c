import Foundation

/// The figures a script of Tests/ prints as one JSON object (run from Tests/, its modules beside
/// it); nil when it could not run or failed. `environment`: added to this process's.
func pythonFigures(_ script: String, _ arguments: [String], environment: [String: String] = [:]) -> [String: Double]? {
    let tests = FileManager.default.currentDirectoryPath + "/Tests"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", tests + "/" + script] + arguments
    process.currentDirectoryURL = URL(fileURLWithPath: tests)
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? try? JSONDecoder().decode([String: Double].self, from: data) : nil
}
