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

/// `--trace`: where each page load's time went (bench_phones.py's `trace_*` figures, medians in ms
/// from the navigation), Chromium's phone beside the computer's page.
func printLoadPhases(_ f: [String: Double]) {
    FileHandle.standardError.write(Data("· load phases (median ms from the navigation: document read · parsed · modules run · shown):\n".utf8))
    for (kind, name) in [("warm", "phone, warm"), ("warm_base", "computer's page, warm"), ("cold", "phone, cold"), ("cold_base", "computer's page, cold")] {
        let phases = ["document", "parsed", "modules", "shown"].map { String(format: "%.0f", f["trace_\(kind)_\($0)"] ?? .nan) }
        FileHandle.standardError.write(Data("    \(name): \(phases.joined(separator: " · "))\n".utf8))
    }
}
