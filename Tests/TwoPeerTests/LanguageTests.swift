import Foundation
import Testing
@testable import PeerSync

/// Languages across real processes (issue 40): Anna reads Polish, Tom English; each
/// machine renders what it shows in its own reader's words, from data.
@Suite(.serialized) struct LanguageTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    static let polish = ["LANG": "pl_PL.UTF-8"]
    static let pl = MessageCatalogue.builtIn("pl")!

    func hookFile(_ home: Home) -> String { home.path + "-notifications.jsonl" }

    func notifications(_ home: Home) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: hookFile(home), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func agent(_ home: Home, _ args: [String] = [], environment: [String: String] = [:]) throws -> AgentProcess {
        try AgentProcess(
            home: home.path, ["--on-notify", "cat >> '\(hookFile(home))'"] + args,
            wrapper: ["/usr/bin/env", "-u", "DBUS_SESSION_BUS_ADDRESS", "-u", "XDG_RUNTIME_DIR"], environment: environment)
    }

    @Test func annasNotificationIsPolishWithThePolishPluralAndTomsIsEnglish() throws {
        let a = Home(path: scratch.home("a")), b = Home(path: scratch.home("b"))
        try a.run(["init"]) // Anna (this machine) and Tom
        let pairing = try AgentProcess(home: a.path)
        try b.pair(with: a, at: pairing, member: "Tom")
        _ = pairing.stop()
        // Anna chooses Polish for herself: her member's choice travels to every machine.
        try a.run(["language", "pl", "--member"])
        // Anna's agent runs in an English environment: her choice wins over it.
        let agentA = try agent(a)
        defer { _ = agentA.stop() }
        let agentB = try agent(b, ["--peer", agentA.address])
        defer { _ = agentB.stop() }
        try a.waitUntil("synced")

        for item in ["Mleko", "Jajka", "Chleb"] { try b.run(["shop", "add", item]) }
        #expect(eventually(timeout: 20) { notifications(a).count == 1 }, "A: \(notifications(a))")
        let shown = try #require(notifications(a).first)
        #expect(shown["count"] as? Int == 3)
        #expect(shown["summary"] as? String == Self.pl.text("notify.shopping.many", ["count": 3]), "\(shown)")
        #expect(shown["summary"] as? String != "3 new items added to Shopping List")
        let body = shown["body"] as? String ?? ""
        #expect(body.contains("„Mleko”") && body.contains("Tom") && !body.contains(" and ") && !body.contains("by "), "\(body)")
        // Five more: Polish "many", another form than three's "few".
        let few = Self.pl.text("notify.shopping.many", ["count": 3]).replacing("3", with: "")
        let many = Self.pl.text("notify.shopping.many", ["count": 5]).replacing("5", with: "")
        #expect(few != many, "Polish: \(few) / \(many)")

        // Anna adds on A: Tom's machine tells him in English.
        try a.run(["shop", "add", "Apples"])
        #expect(eventually(timeout: 20) { notifications(b).count == 1 }, "B: \(notifications(b))")
        #expect(notifications(b).first?["summary"] as? String == "“Apples” added to Shopping List")
        #expect(notifications(b).first?["body"] as? String == "by Anna")

        // The member's choice replicated: Tom's machine knows Anna reads Polish.
        let members = try JSONSerialization.jsonObject(with: Data(try b.run(["member", "list", "--json"]).stdout.utf8)) as? [[String: Any]] ?? []
        #expect(members.first { $0["name"] as? String == "Anna" }?["language"] as? String == "pl", "\(members)")
    }

    @Test func annasCommandLineInPolishCountsTwoAndFivePeanuts() throws {
        var a = Home(path: scratch.home("a"))
        try a.run(["init"])
        try a.run(["kids", "pin", "set", "--pin-stdin"], stdin: "1234\n")
        for kid in ["Ola", "Jan"] { try a.run(["kids", "add", kid, "--pin-stdin"], stdin: "1234\n") }
        try a.run(["kids", "adjust", "Ola", "--add", "2", "--reason", "Urodziny", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "adjust", "Jan", "--add", "5", "--reason", "Sprzątanie", "--pin-stdin"], stdin: "1234\n")
        a.environment = Self.polish
        let list = try a.run(["kids", "list"]).stdout
        #expect(list.contains("2 orzeszki") && list.contains("5 orzeszków"), "\(list)")
        #expect(!list.contains("peanut"), "\(list)")
        // The same in German and Dutch by LANGUAGE, and by --lang over the environment.
        a.environment = ["LANGUAGE": "de", "LANG": "pl_PL.UTF-8"]
        #expect(try a.run(["kids", "list"]).stdout.contains("5 Erdnüsse"))
        #expect(try a.run(["kids", "list", "--lang", "nl"]).stdout.contains("5 pinda's"))
        // A refusal in Polish too; --json stays the same in every language.
        a.environment = Self.polish
        let refused = try a.run(["shop", "check", "Chleb"], orFail: false)
        #expect(refused.status != 0 && refused.stderr.contains("„Chleb”") && !refused.stderr.contains("no item"), "\(refused.stderr)")
        a.environment = [:]
        let english = try a.run(["kids", "list", "--json"]).stdout
        a.environment = Self.polish
        #expect(try a.run(["kids", "list", "--json"]).stdout == english)
    }

    @Test func anUnknownLanguageIsEnglishWithOneLineAndABrokenHomeFileIsNamed() throws {
        var a = Home(path: scratch.home("a"))
        try a.run(["init"])
        try a.run(["shop", "add", "Milk"])
        let unknown = try a.run(["shop", "list", "--lang", "xx"])
        #expect(unknown.stdout.contains("Shopping (1)"), "\(unknown.stdout)")
        #expect(unknown.stderr.split(separator: "\n").count == 1 && unknown.stderr.contains("“xx”"), "\(unknown.stderr)")

        let file = a.path + "/messages-pl.json"
        try Data("{\"refusal.wrong_pin\": ".utf8).write(to: URL(fileURLWithPath: file))
        a.environment = Self.polish
        let broken = try a.run(["shop", "list"])
        #expect(broken.stdout.contains("Shopping (1)"), "English used: \(broken.stdout)")
        #expect(broken.stderr.contains(file) && broken.stderr.split(separator: "\n").count == 1, "\(broken.stderr)")
        // Nothing else is affected: the household works, and a good file is used.
        try a.run(["shop", "add", "Eggs"])
        try Data("{\"refusal.nothing_to_add\": \"podaj choć jedną nazwę\"}".utf8).write(to: URL(fileURLWithPath: file))
        let fixed = try a.run(["shop", "add"], stdin: "\n", orFail: false)
        #expect(fixed.stderr.contains("podaj choć jedną nazwę"), "\(fixed.stderr)")
    }

    /// Every sentence of the command line comes from the catalogue: under a pseudo-language
    /// (each message wrapped in ⟦…⟧, a home's own file), whatever is outside the brackets
    /// is data we typed, never English.
    @Test func underAPseudoLanguageTheCommandLineSaysNothingInEnglish() throws {
        var a = Home(path: scratch.home("a"))
        try a.run(["init", "--household", "Qhome"])
        try Pseudo.write(to: a.path)
        a.environment = ["PULSE_LANG": "qps"]
        let data = ["Qmilk", "Qeggs", "Qdishes", "Qgarden", "Qfence", "Qola", "Qhome", "Anna", "Tom", "House", "Pulse", "pulse-peer", "PIN"]
        let commands: [([String], String?)] = [
            (["shop", "add", "Qmilk", "Qeggs"], nil), (["shop", "list"], nil), (["shop", "check", "Qmilk"], nil),
            (["shop", "list", "--restock"], nil), (["shop", "restock", "Qmilk"], nil), (["shop", "rename", "Qeggs", "Qeggs2"], nil),
            (["shop", "clear"], nil), (["shop", "undo"], nil), (["shop", "check", "Qnothing"], nil),
            (["task", "add", "Qdishes", "--due", "today"], nil), (["task", "list"], nil), (["task", "done", "Qdishes"], nil),
            (["task", "list", "--mine"], nil), (["backlog", "category", "add", "Qgarden"], nil),
            (["backlog", "add", "Qgarden", "Qfence"], nil), (["backlog", "list"], nil),
            (["member", "list"], nil), (["whoami"], nil), (["settings"], nil), (["devices"], nil), (["conflicts"], nil),
            (["status"], nil), (["household"], nil), (["notifications"], nil),
            (["kids", "pin", "set", "--pin-stdin"], "1234\n"), (["kids", "add", "Qola", "--pin-stdin"], "1234\n"),
            (["kids", "catalogue"], nil), (["kids", "select", "1", "--pin-stdin"], "1234\n"), (["kids", "list"], nil),
            (["kids", "adjust", "Qola", "--add", "3", "--reason", "Qgift", "--pin-stdin"], "1234\n"),
            (["kids", "history", "Qola"], nil), (["kids", "done", "Qola", "1"], nil),
            (["kids", "adjust", "Qola", "--take", "99", "--reason", "Qx", "--pin-stdin"], "1234\n"),
            (["recurring", "list"], nil), (["init"], nil),
        ]
        var seen = 0
        for (args, stdin) in commands {
            let result = try a.run(args, stdin: stdin, orFail: false)
            for line in (result.stdout + "\n" + result.stderr).split(separator: "\n") {
                seen += 1
                let left = Pseudo.outside(String(line), data: data)
                #expect(left.isEmpty, "`pulse-peer \(args.joined(separator: " "))` said English: \(left) in “\(line)”")
            }
        }
        #expect(seen > 40, "the commands said \(seen) lines")
    }
}

/// The page in every language in a real browser (Tests/web_languages.py): chosen by the
/// browser's Accept-Language and in More; no English under the pseudo-language; Polish and
/// German fit at 390 and 1366 px (screenshots with PULSE_SCREENSHOTS=dir).
@Suite(.serialized) struct PageLanguageTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    @Test(.enabled(if: WebPageTests.canRunBrowser, "needs chromium, chromium-driver and selenium (scripts/setup.sh --tests)"))
    func thePageInEveryLanguageAndNoEnglishUnderThePseudoLanguage() throws {
        if let problem = WebPageTests.browserProblem { Issue.record("\(problem)"); return }
        try everyLanguage(engine: "chromium")
    }

    /// The page's languages on this engine (issue 56: Firefox ESR and WebKitGTK in
    /// PageOnOtherEnginesTests); the pseudo-language's check (the catalogue's coverage, the same
    /// words everywhere) on Chromium only.
    func everyLanguage(engine: String) throws {
        let a = Home(path: scratch.home("a"))
        try a.run(["init", "--household", "Qhome", "--member", "Qanna", "--member", "Qtom"])
        try a.run(["shop", "add", "Qmilk", "Qapples", "Qbrotgetreidemischungspackung"])
        try a.run(["shop", "check", "Qapples"])
        try a.run(["shop", "lists", "add", "Qlidl"])
        try a.run(["shop", "--list", "Qlidl", "add", "Qbutter"])
        try a.run(["shop", "going", "--shop", "Qmarket"])
        try a.run(["task", "add", "Qdishes", "--due", "today", "--assignee", "Qtom"])
        try a.run(["backlog", "category", "add", "Qgarden"])
        try a.run(["backlog", "add", "Qgarden", "Qtulips"])
        // A chore that rotates, and someone away (issue 58): its turns and counts, the days away.
        try a.run(["recurring", "add", "Qhoover", "--daily", "--rotate", "Qanna,Qtom"])
        try a.run(["recurring", "away", "add", "Qtom", "--from", "tomorrow", "--to", "tomorrow"])
        try a.run(["kids", "pin", "set", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "add", "Qmia", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "select", "rule_001", "chore_001", "reward_001", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "done", "Qmia", "chore_001"])
        // A goal, and chores that wait for a parent (issue 58): one waiting, one declined with a word.
        try a.run(["kids", "goal", "Qmia", "reward_001"])
        try a.run(["kids", "select", "chore_002", "chore_003", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "approval", "on", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "report", "Qmia", "chore_002"])
        try a.run(["kids", "report", "Qmia", "chore_003"])
        try a.run(["kids", "decline", "chore_003", "--word", "Qtidy", "--pin-stdin"], stdin: "1234\n")
        // A chore taking turns between two kids: today Qzoe's, so Qmia's card says so.
        try a.run(["kids", "add", "Qzoe", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "select", "chore_004", "--pin-stdin"], stdin: "1234\n")
        try a.run(["kids", "rotate", "chore_004", "Qzoe,Qmia", "--pin-stdin"], stdin: "1234\n")
        try Pseudo.write(to: a.path)
        let agent = try AgentProcess(home: a.path)
        defer { _ = agent.stop() }
        // A second computer, never started: a row with its state, Rename and Remove, where a name
        // broke mid-word at 390 px in Polish and German (issue 52, item 12).
        try Home(path: scratch.home("b")).pair(with: a, at: agent, member: "Qtom")
        let data = [
            "Qhome", "Qanna", "Qtom", "Qmilk", "Qapples", "Qbrotgetreidemischungspackung", "Qdishes", "Qgarden", "Qtulips", "Qmia", "Qlidl", "Qbutter",
            "Qmarket", "Qhoover", "Qtidy", "Qzoe", "House",
            "Pulse",
        ]
        var command = [
            "python3", WebPageTests.script("web_languages.py"), PulsePeer.executable.path, a.path, data.joined(separator: ","), "--engine=\(engine)",
        ]
        if let directory = ProcessInfo.processInfo.environment["PULSE_SCREENSHOTS"], engine == "chromium" { command.append(directory + "/languages") }
        let run = try Shell.run(command, timeout: 600)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for check in [
            "Accept-Language picks", "signed out, the notice", "the choice in More", "fit at 320 (WCAG's reflow), 390 and 1366",
            "More → Computers breaks no word", "on every tab on \(engine)",
        ] + (engine == "chromium" ? ["under the pseudo-language"] : []) {
            #expect(run.stdout.contains("ok " + check) || run.stdout.contains(check), "missing: \(check)\n\(run.stdout)\(run.stderr)")
        }
    }
}

/// The pseudo-language: every English message wrapped in ⟦…⟧, written as a home's own
/// language `qps` (docs/LANGUAGES.md).
enum Pseudo {
    static var english: [String: String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/PulseHousehold/Resources/messages-en.json")
        return (try? JSONDecoder().decode([String: String].self, from: Data(contentsOf: url))) ?? [:]
    }

    static func write(to home: String) throws {
        let wrapped = english.mapValues { "⟦" + $0 + "⟧" }
        try JSONEncoder().encode(wrapped).write(to: URL(fileURLWithPath: home + "/messages-qps.json"))
    }

    /// The words of `line` outside every ⟦…⟧ that are neither `data`, numbers, ids nor paths.
    static func outside(_ line: String, data: [String]) -> [String] {
        var depth = 0
        var out = ""
        for c in line {
            if c == "⟦" { depth += 1; out.append(" ") } else if c == "⟧" { depth = max(0, depth - 1); out.append(" ") } else if depth == 0 { out.append(c) }
        }
        let words = out.split(whereSeparator: { !$0.isLetter && $0 != "-" && $0 != "/" && $0 != "." && $0 != "_" }).map(String.init)
        return words.filter { word in
            let bare = word.trimmingCharacters(in: CharacterSet(charactersIn: "-./_"))
            guard bare.count >= 3, bare.contains(where: \.isLetter) else { return false }
            if word.contains("/") { return false } // a path
            if bare.allSatisfy(\.isHexDigit) { return false } // an id
            let lower = bare.lowercased()
            if data.contains(where: { lower.hasPrefix($0.lowercased()) || $0.lowercased().hasPrefix(lower) }) { return false }
            return true
        }
    }
}
