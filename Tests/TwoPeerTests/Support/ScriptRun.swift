import Testing

/// A browser script's run (Tests/web_*.py) judged: the scripts print one `ok …` line per check
/// passed and `FAILED: …` for one that failed.
extension PulsePeer.Result {
    /// The `ok …` lines printed.
    var passed: [String] { stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("ok ") } }

    /// Why it stopped, in a line or a few: its `FAILED:` lines, else the last line of a
    /// traceback, else that it said nothing (killed at its deadline, or a crash).
    var whyItFailed: String {
        let lines = (stdout + "\n" + stderr).split(separator: "\n").map(String.init)
        let said = lines.filter { $0.hasPrefix("FAILED") || $0.contains("check(s) failed") }
        if !said.isEmpty { return said.joined(separator: "\n") }
        if let last = lines.last(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }), stderr.contains("Traceback") {
            return "an exception: \(last)"
        }
        return "it stopped with status \(status) and no FAILED line (killed at its deadline, or a crash)"
    }

    /// One issue if `name` failed, its reason first and then all it printed; one more naming every
    /// check in `checks` that no `ok` line says (all it printed again only if it did not fail). A
    /// failed walk so makes two issues, not one per check after it, each repeating the output.
    func expectPassed(_ name: String, checks: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let output = stdout + stderr
        #expect(status == 0, "\(name) failed: \(whyItFailed)\n\(output)", sourceLocation: sourceLocation)
        let passed = self.passed
        let missing = checks.filter { check in !passed.contains { $0.contains(check) } }
        #expect(
            missing.isEmpty, "\(name) did not say: \(missing.joined(separator: " · "))\(status == 0 ? "\n\(output)" : " (it failed: above)")",
            sourceLocation: sourceLocation)
    }
}
