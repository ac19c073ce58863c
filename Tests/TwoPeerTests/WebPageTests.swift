import Foundation
import Testing

/// The family's web page, as people use it: two machines' agents, each serving its page,
/// in a real headless Chromium (Tests/web_e2e.py, Selenium), and attacked from outside
/// (Tests/web_security.py: forged headers over raw HTTP, a hostile page in a signed-in
/// browser). The scripts print one `ok …` line per check and exit non-zero on the first
/// failure; each check waits on a condition with a deadline.
@Suite(.serialized) struct WebPageTests {
    /// Why a real browser cannot run here (nil: it can). Locally the browser tests are then
    /// skipped with this reason; in CI (`CI` set) they always run, and fail if it is missing.
    static let browserProblem: String? = {
        var missing: [String] = []
        for path in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: path) {
            missing.append(path)
        }
        if (try? Shell.run(["python3", "-c", "import selenium"], timeout: 30))?.status != 0 { missing.append("python3's selenium") }
        return missing.isEmpty ? nil : "no real browser here (missing \(missing.joined(separator: ", "))): `bash scripts/setup.sh --tests` installs it"
    }()
    static var canRunBrowser: Bool { browserProblem == nil || ProcessInfo.processInfo.environment["CI"] != nil }

    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// What the pages show: a list, categories with items, a kid with rules, chores and rewards.
    func furnish(_ home: Home) throws {
        try home.run(["shop", "add", "Milk", "Apples"])
        try home.run(["backlog", "category", "add", "Garden"])
        try home.run(["backlog", "category", "add", "House"])
        try home.run(["backlog", "add", "Garden", "Plant tulips"])
        try home.run(["backlog", "add", "House", "Fix the squeaky door"])
        try home.run(["kids", "pin", "set", "--pin-stdin"], stdin: "1234\n")
        try home.run(["kids", "add", "Mia", "--pin-stdin"], stdin: "1234\n")
        try home.run(["kids", "select", "rule_001", "chore_001", "chore_002", "reward_001", "--pin-stdin"], stdin: "1234\n")
        try home.run(["kids", "done", "Mia", "chore_001"])
    }

    @Test(.enabled(if: canRunBrowser, "needs chromium, chromium-driver and selenium (scripts/setup.sh --tests)"))
    func thePageInARealBrowserOnTwoMachines() throws {
        if let problem = Self.browserProblem { Issue.record("\(problem)"); return }
        try dailyLists(engine: "chromium")
    }

    /// The daily lists on two machines (Tests/web_e2e.py) on this engine (issue 56: Chromium here,
    /// Firefox ESR and WebKitGTK in PageOnOtherEnginesTests).
    func dailyLists(engine: String) throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try furnish(a)
        let agentA = try AgentProcess(home: a.path)
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        try b.run(["whoami", "--set", "Tom"])
        let web = try #require(agentB.web.flatMap(URL.init(string:))?.port)
        var command = [
            "python3", Self.script("web_e2e.py"), PulsePeer.executable.path, a.path, b.path,
            String(agentB.process.processIdentifier), String(web), "--engine=\(engine)",
        ]
        if let directory = ProcessInfo.processInfo.environment["PULSE_SCREENSHOTS"], engine == "chromium" { command.append(directory) }
        let run = try Shell.run(command, timeout: 300)
        run.expectPassed(
            "web_e2e.py (\(engine))",
            checks: [
                "shown on B without a reload", "New items added (1)", "restock pool (both pages) → back",
                "Undo brought back", "“Me” on Tom's machine", "4th active task is refused", "appearance dark applied", "Download a backup",
                "shows the agent unreachable", "its page recovered by itself", "“Add it anyway” adds the 4th",
                "stays in its field", engine == "webkit" ? "the consoles not read" : "no script errors",
            ])
        let passed = run.passed
        // Within a second of the person's Enter on A, the item is on B's page.
        let latency = passed.first { $0.contains("without a reload in") }.flatMap { line in
            line.split(separator: " ").reversed().dropFirst(4).first.flatMap { Int($0) }
        }
        #expect(latency.map { $0 < 1000 } == true, "\(passed)")
        _ = agentA.stop()
    }

    /// Issue 41: what a family member who never opens a terminal does from the page, on two
    /// new computers (Tests/web_family.py starts their agents): the household started from
    /// the welcome, parents' mode behind the PIN (keypad, wrong PINs rate-limited, a kid, six
    /// catalogue items, an own item, an adjustment, a new PIN), the success moments and
    /// Celebrations off, one item deleted and undone, a task edited, a backlog item moved
    /// with the keyboard, a schedule in words, the second computer joined from its own page
    /// with the code the first shows, renamed, removed, and a conflict in words.
    @Test(.enabled(if: canRunBrowser, "needs chromium, chromium-driver and selenium (scripts/setup.sh --tests)"))
    func theWholeHouseholdFromThePage() throws {
        if let problem = Self.browserProblem { Issue.record("\(problem)"); return }
        try wholeHousehold(engine: "chromium")
    }

    /// The whole household from the page (Tests/web_family.py) on this engine (issue 56).
    func wholeHousehold(engine: String) throws {
        var command = [
            "python3", Self.script("web_family.py"), PulsePeer.executable.path, scratch.home("a"), scratch.home("b"), "--engine=\(engine)",
        ]
        if let directory = ProcessInfo.processInfo.environment["PULSE_SCREENSHOTS"], engine == "chromium" { command.append(directory + "/family") }
        let run = try Shell.run(command, timeout: 400)
        run.expectPassed(
            "web_family.py (\(engine))",
            checks: [
                "“Start a household” makes The Smiths", "a first PIN chosen on the keypad", "three categories of six", "makes her balance 40",
                "Mia → Mia Rose", "three wrong PINs refused", "the right PIN opens", "the old one is refused",
                "“Great job!” half-sheet, gone by itself", "full-screen confetti", "Celebrations off: no sheet",
                "keeps the chips it did not change", "Undo brings the same item back", "is 500 g of flour; its note set in place", "as a trip walked them",
                "stays above the tab bar",
                "restock pool's names are offered", "a task edited in place", "Undo brings it back",
                "“All done ✓”", "moved up with the keyboard", "renamed in place", "shown in words", "More → This computer",
                "typed on the new computer's page it joins", "“Kitchen laptop” on B too", "a conflict", "saying it is permanent",
                "stays readable above the next reward's confetti", "Undo brings it back into its category",
                "each computer tells its person of the other's additions", engine == "webkit" ? "the console not read" : "no script errors",
            ])
    }

    /// Runs a phone script (`BIN HOME… [SHOTS]`) on `homes`: its run, after expecting it to
    /// succeed and to print each of `checks` (the `ok …` lines' words).
    @discardableResult
    func phoneScript(_ name: String, _ homes: [Home], timeout: Double, checks: [String]) throws -> PulsePeer.Result {
        var command = ["python3", Self.script(name), PulsePeer.executable.path] + homes.map(\.path)
        if let directory = ProcessInfo.processInfo.environment["PULSE_SCREENSHOTS"] { command.append(directory + "/phones") }
        // The next test release (TwoReleasesTests.next), for a phone roaming across releases.
        var environment = ProcessInfo.processInfo.environment
        if let next = TwoReleasesTests.next { environment["PULSE_NEXT_BINARY"] = next }
        let run = try PulsePeer.runProcess(command, environment: environment, timeout: timeout)
        run.expectPassed(name, checks: checks)
        return run
    }

    /// Issue 42: the phones' listener across network namespaces (Tests/web_phones.py): off
    /// until turned on; the two QR codes decode to the links shown; the phone's browser, with
    /// the household CA in its own NSS database, loads the page with no warning as a secure
    /// context, and refuses another CA's certificate and a public name forged with the
    /// household's own intermediate; pairing works once, only after the computer approves,
    /// with a Secure, HttpOnly, SameSite=Strict cookie; the phone's list is live both ways;
    /// strangers get nothing and a flood is bounded; removal on the other computer's page
    /// reaches the serving agent, which closes the phone's stream at once.
    @Test(.enabled(if: canRunBrowser && TestHost.available, "needs chromium, selenium, certutil and network namespaces (root)"))
    func aPhoneOnTheHomeNetworkIsTrustedPairedAndRemoved() throws {
        if let problem = Self.browserProblem { Issue.record("\(problem)"); return }
        let homes = try scratch.household("a", "b")
        try homes[0].run(["shop", "add", "Milk"])
        try phoneScript(
            "web_phones.py", homes, timeout: 300,
            checks: [
                "phones are off until turned on", "serves https on port", "zbarimg reads", "the same fingerprint",
                "refuses the HTTPS page", "whose fingerprint was shown: openssl x509 -fingerprint -sha256", "the CA page's steps name the certificate",
                "a spoofer's own root has another",
                "from another CA on the same address is refused",
                "bank.example.com", "isSecureContext is true", "one household CA: the second computer", "works once", "“Add this phone?”", "SameSite=Strict",
                "updates live", "Plasters added there is on Pharmacy", "notifications: Tom's addition", "its Home Screen (More)", "installable",
                "still reaches its computer at once", "“I'm going shopping” on the phone: the second computer sees Anna's trip",
                "a kid's chores on the phone: reported there and on the other computer", "a phone cannot act in parents' mode",
                "days away from the phone",
                "shows the last list, says how old it is", "and queues three additions",
                "to send them within the week", "still once",
                "the phone used the second computer", "across releases", "machine.remove → 404",
                "from a stranger's namespace",
                "over plain HTTP is refused",
                "silent connections from one address", "Apps and assistants: CalDAV turned on", "removed from the other computer's page",
                "the port serves CalDAV alone", "no longer accepts connections",
                "no script errors",
            ])
    }

    /// Issues 51 and 56: the phone app on Chromium, WebKitGTK (Safari's engine family) and Firefox
    /// ESR, each in the phone's own network namespace trusting the household CA through the
    /// engine's own store where it has one (Tests/web_phone_engines.py): the CA page's
    /// fingerprint, pairing by the link its QR code holds, offline taps on one name (add, check,
    /// restock, in the orders a person makes them, starting from the list, the pool or nothing)
    /// each applied once as meant, roaming to the other computer while its own is frozen and back,
    /// and axe-core's WCAG 2.2 AA on the app online, offline and roaming.
    @Test(.enabled(if: canRunBrowser && TestHost.available, "needs chromium, selenium, certutil and network namespaces (root)"))
    func aPhoneIsPairedByItsCodeWorksOfflineAndRoamsOnEveryEngine() throws {
        if let problem = Self.browserProblem ?? PageAccessibilityTests.axeProblem { Issue.record("\(problem)"); return }
        guard PageAccessibilityTests.canRun("webkit"), PageAccessibilityTests.canRun("firefox") else { return }
        let run = try phoneScript("web_phone_engines.py", try scratch.household("a", "b"), timeout: 500, checks: [])
        let stdout = run.stdout
        for engine in ["Chromium", "WebKitGTK", "Firefox"] {
            let said = run.passed.filter { $0.hasPrefix("ok \(engine): ") }
            #expect(said.contains { $0.contains("paired by the link its QR code holds") }, "\(engine)\n\(stdout)")
            #expect(said.filter { $0.contains("offline") && $0.contains("applied once as meant") }.count == 4, "\(engine)\n\(stdout)")
            #expect(said.contains { $0.contains("the phone used the other computer") }, "\(engine)\n\(stdout)")
        }
    }

    /// Issue 51: a phone as a family lives with it (Tests/web_phone_faults.py): its computer
    /// falls silent (agent frozen, packets dropped) and within 10 s the phone says so and uses
    /// the other computer, keeping what is typed across closing the app, each change arriving
    /// once; a flood of strangers from fifteen addresses never stops the signed-in phone; a
    /// phone whose Wi-Fi flapped (seventy signed-in connections dropped unseen) gets in at once;
    /// a restock item re-added offline and checked; the cookie renewed with use, and one that
    /// expired unused renewed with one tap; a phone's
    /// status names no machine; a phone paired by its computer's address goes on with it at
    /// its `.local` name when the address changes; signing out on the phone asks first and
    /// forgets its copy.
    @Test(.enabled(if: canRunBrowser && TestHost.available, "needs chromium, selenium, certutil and network namespaces (root)"))
    func aPhoneKeepsWorkingWhenItsComputerFallsSilentOrAStrangerFloodsIt() throws {
        if let problem = Self.browserProblem { Issue.record("\(problem)"); return }
        let homes = try scratch.household("a", "b")
        try homes[0].run(["shop", "add", "Milk"])
        try phoneScript(
            "web_phone_faults.py", homes, timeout: 400,
            checks: [
                "the links name this computer's .local name", "with the code both screens show", "and told on the desktop",
                "A's agent frozen: the phone said so",
                "every packet dropped: the phone said so", "the phone's 50 signed-in requests all answered",
                "a phone whose Wi-Fi flapped",
                "a restock item re-added offline and checked", "a spoofer relaying the CA page shows the computer's fingerprint", "renewed at each start",
                "one tap signs it in again",
                "names no machine id or address", "A's address changed under a phone paired by it",
                "signing out on the phone asks first", "no script errors",
            ])
    }

    @Test(.enabled(if: canRunBrowser, "needs chromium, chromium-driver and selenium (scripts/setup.sh --tests)"))
    func strangersAndOtherPagesGetNothing() throws {
        if let problem = Self.browserProblem { Issue.record("\(problem)"); return }
        let homes = try scratch.household("a")
        let a = homes[0]
        try a.run(["shop", "add", "Milk"])
        try a.run(["kids", "pin", "set", "--pin-stdin"], stdin: "1234\n")
        let agent = try AgentProcess(home: a.path)
        let web = try #require(agent.web)
        let run = try Shell.run(["python3", Self.script("web_security.py"), PulsePeer.executable.path, a.path, web], timeout: 180)
        run.expectPassed(
            "web_security.py",
            checks: [
                "answers 401 and no household data", "works once", "is refused (421/400)", "POSTs from another origin",
                "change nothing", "X-Frame-Options DENY", "the page still answers", "hostile page", "sign-out ends",
                "downloads a whole backup", "no invitation is opened", "a flood of 12 wrong PINs", "nothing changed",
                "parents' mode through the page's API",
            ])
        #expect(!agent.log.contains("token=") && !agent.log.contains("pulse_session"), "the agent logs no sign-in token or cookie")
        _ = agent.stop()
    }

    /// `run --web` takes loopback only; `open` logs in through xdg-open, or prints the link;
    /// a taken default port leaves the agent running without its page (status says why),
    /// a taken chosen one stops the start.
    @Test func theWebFlagAndTheOpenCommand() throws {
        let home = try scratch.household("w")[0]
        for (value, says) in [
            ("0.0.0.0:47654", "not a loopback address"), ("192.168.1.2:80", "not a loopback address"),
            ("127.0.0.1", "HOST:PORT"), ("nonsense", "HOST:PORT"),
        ] {
            let run = try PulsePeer.run(["run", "--home", home.path, "--no-mdns", "--web", value], timeout: 30)
            #expect(run.status != 0 && run.stderr.contains(says), "\(value): \(run.stderr)")
        }
        let noAgent = try PulsePeer.run(["open", "--print", "--home", home.path])
        #expect(noAgent.status != 0 && noAgent.stderr.contains("no agent is running"), "\(noAgent.stderr)")

        let off = try AgentProcess(home: home.path, web: "off")
        #expect(off.web == nil)
        let refused = try PulsePeer.run(["open", "--home", home.path])
        #expect(refused.status != 0 && refused.stderr.contains("--web off"), "\(refused.stderr)")
        #expect(try home.status()["machine"].flatMap { ($0 as? [String: Any])?["web"] } == nil)
        _ = off.stop()

        let agent = try AgentProcess(home: home.path)
        let web = try #require(agent.web)
        let machine = try home.status()["machine"] as? [String: Any]
        #expect(machine?["web"] as? String == web)
        // A stand-in xdg-open records the link it is given.
        let bin = scratch.home("bin"), opened = scratch.home("opened.log")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/sh\necho \"$1\" >> '\(opened)'\nexit 0\n".write(toFile: bin + "/xdg-open", atomically: true, encoding: .utf8)
        chmod(bin + "/xdg-open", 0o755)
        let open = try PulsePeer.run(["open", "--home", home.path], environment: ["PATH": bin + ":/usr/bin:/bin"])
        #expect(open.status == 0 && open.stdout.contains("Opened House Pulse in your browser (\(web))"), "\(open.stdout)\(open.stderr)")
        #expect(!open.stdout.contains("token="), "the link is not printed when a browser took it")
        let link = try String(contentsOfFile: opened, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(link.hasPrefix(web + "/login?token=") && link.count == (web + "/login?token=").count + 43, "\(link)")
        // An xdg-open that fails (no desktop): the link is printed instead.
        try "#!/bin/sh\nexit 3\n".write(toFile: bin + "/xdg-open", atomically: true, encoding: .utf8)
        let printed = try PulsePeer.run(["open", "--home", home.path], environment: ["PATH": bin + ":/usr/bin:/bin"])
        #expect(printed.status == 0 && printed.stdout.contains(web + "/login?token="), "\(printed.stdout)")
        #expect(printed.stdout.contains("works once, for two minutes"))

        // The page's port taken: chosen explicitly, the start fails and says so…
        let port = try #require(URL(string: web)?.port)
        let second = try scratch.household("w2")[0]
        let clash = try PulsePeer.run(
            ["run", "--home", second.path, "--port", "0", "--no-mdns", "--web", "127.0.0.1:\(port)"],
            timeout: 30)
        #expect(clash.status != 0 && clash.stderr.contains("the web page cannot listen on 127.0.0.1:\(port)"), "\(clash.stderr)")
        _ = agent.stop()
        // …while the default one taken leaves the agent syncing without its page, saying why.
        // Held by this test, not by an agent: the default port is in the ephemeral range, so
        // another test's connection may hold it a moment (waited for, with a deadline).
        let holder = try HeldPort.take(47654)
        let defaulted = try AgentProcess(home: second.path, web: nil)
        #expect(defaulted.web == nil)
        let warnings = try second.status()["machine"].flatMap { ($0 as? [String: Any])?["warnings"] as? [String] } ?? []
        #expect(warnings.contains { $0.contains("the web page cannot listen on 127.0.0.1:47654") }, "\(warnings)")
        _ = defaulted.stop()
        holder.release()
    }
}

/// The page on Firefox ESR and WebKitGTK (issue 56): the daily lists on two machines, the whole
/// household from the page (parents' mode, the family script's path) and the languages, as on
/// Chromium. A suite of its own, so that these runs go beside WebPageTests' instead of after them.
@Suite(.serialized) struct PageOnOtherEnginesTests {
    @Test(
        .enabled(if: WebPageTests.canRunBrowser, "needs chromium, chromium-driver and selenium (scripts/setup.sh --tests)"), arguments: ["firefox", "webkit"])
    func theDailyListsOnTwoMachines(engine: String) throws {
        guard PageAccessibilityTests.canRun(engine) else { return }
        try WebPageTests().dailyLists(engine: engine)
    }

    @Test(
        .enabled(if: WebPageTests.canRunBrowser, "needs chromium, chromium-driver and selenium (scripts/setup.sh --tests)"), arguments: ["firefox", "webkit"])
    func theWholeHouseholdFromThePage(engine: String) throws {
        guard PageAccessibilityTests.canRun(engine) else { return }
        try WebPageTests().wholeHousehold(engine: engine)
    }

    @Test(
        .enabled(if: WebPageTests.canRunBrowser, "needs chromium, chromium-driver and selenium (scripts/setup.sh --tests)"), arguments: ["firefox", "webkit"])
    func thePageInEveryLanguage(engine: String) throws {
        guard PageAccessibilityTests.canRun(engine) else { return }
        try PageLanguageTests().everyLanguage(engine: engine)
    }
}
