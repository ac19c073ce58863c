import Foundation
import Testing
@testable import PeerSync
@testable import PulseNotify

/// Notifications and the live feed across real processes: members Anna (machines A and C)
/// and Tom (B). Hooks record what each agent notifies; a real session bus (dbus-daemon)
/// with a stand-in notification service (Tests/notification_service.py, python3-dbus)
/// records the D-Bus calls; `watch --json` reads the feed.
@Suite(.serialized) struct NotificationTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    /// Anna's A, Tom's B, Anna's second machine C, all paired and agents running with a hook.
    func household() throws -> (a: Home, b: Home, c: Home) {
        let a = Home(path: scratch.home("a")), b = Home(path: scratch.home("b")), c = Home(path: scratch.home("c"))
        try a.run(["init"]) // members Anna (this machine) and Tom
        let agent = try AgentProcess(home: a.path)
        try b.pair(with: a, at: agent, member: "Tom")
        try c.pair(with: a, at: agent, member: "Anna")
        _ = agent.stop()
        return (a, b, c)
    }

    func hookFile(_ home: Home) -> String { home.path + "-notifications.jsonl" }

    /// An agent with `--on-notify` appending to its hook file, and no desktop notifications.
    func agent(_ home: Home, _ args: [String] = [], environment: [String] = []) throws -> AgentProcess {
        try AgentProcess(
            home: home.path, ["--on-notify", "cat >> '\(hookFile(home))'"] + args,
            wrapper: ["/usr/bin/env", "-u", "DBUS_SESSION_BUS_ADDRESS", "-u", "XDG_RUNTIME_DIR"] + environment)
    }

    func notifications(_ home: Home) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: hookFile(home), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func notificationStatus(_ home: Home) throws -> [String: Any] {
        ((try home.status()["machine"] as? [String: Any])?["notifications"] as? [String: Any]) ?? [:]
    }

    @Test func othersAdditionsNotifyOnceCountedAndNeverTheAuthorOnAnyOfTheirMachines() throws {
        let (a, b, c) = try household()
        let agentA = try agent(a)
        defer { _ = agentA.stop() }
        let agentB = try agent(b, ["--peer", agentA.address])
        defer { _ = agentB.stop() }
        let agentC = try agent(c, ["--peer", agentA.address])
        defer { _ = agentC.stop() }
        try a.waitUntil("synced", peers: 2)
        let watchB = try Watcher(b), watchC = try Watcher(c)

        // Anna adds on A: Tom's B is told; neither of Anna's machines is.
        try a.run(["shop", "add", "Apples"])
        #expect(eventually(timeout: 20) { notifications(b).count == 1 }, "B: \(notifications(b))")
        #expect(notifications(b).first?["summary"] as? String == "“Apples” added to Shopping List")
        #expect(notifications(b).first?["body"] as? String == "by Anna")
        #expect(watchC.waitFor { $0["title"] as? String == "Apples" }, "C received Anna's item")
        #expect(try notificationStatus(c)["pendingEvents"] as? Int == 0, "C judged Anna's item and holds nothing back")
        #expect(try notificationStatus(a)["pendingEvents"] as? Int == 0)

        // Tom adds three items on B, one command each: A and C get one notification counting 3.
        for item in ["Milk", "Eggs", "Bread"] { try b.run(["shop", "add", item]) }
        #expect(
            eventually(timeout: 20) { notifications(a).count == 1 && notifications(c).count == 1 },
            "A: \(notifications(a)) C: \(notifications(c))")
        for home in [a, c] {
            let shown = try #require(notifications(home).first)
            #expect(shown["count"] as? Int == 3 && shown["summary"] as? String == "3 new items added to Shopping List", "\(shown)")
            #expect(shown["body"] as? String == "“Milk”, “Eggs” and “Bread” — by Tom", "\(shown)")
            let events = shown["events"] as? [[String: Any]] ?? []
            #expect(events.map { $0["title"] as? String ?? "" } == ["Milk", "Eggs", "Bread"])
            #expect(events.allSatisfy { $0["authorName"] as? String == "Tom" && $0["type"] as? String == "shopping.added" })
        }
        // Tom's own machine judged his items and holds nothing back for them.
        #expect(watchB.waitFor { $0["title"] as? String == "Bread" && $0["local"] as? Bool == true })
        #expect(try notificationStatus(b)["pendingEvents"] as? Int == 0)
        #expect(notifications(b).count == 1, "B only ever notified Anna's item: \(notifications(b))")
        #expect(try notificationStatus(a)["shown"] as? Int == 1 && notificationStatus(c)["shown"] as? Int == 1)

        // Settings are per machine: C switches shopping off; Tom's next item notifies A only.
        try c.run(["notifications", "--shopping", "off"])
        #expect(try c.run(["notifications", "--json"]).stdout.contains("\"shopping\" : false"))
        try b.run(["task", "add", "Dishes", "--assignee", "Anna"])
        #expect(eventually(timeout: 20) { notifications(a).count == 2 }, "A: \(notifications(a))")
        #expect(notifications(a).last?["summary"] as? String == "Tom assigned you “Dishes”")
        #expect(eventually(timeout: 20) { notifications(c).count == 2 }, "assigned is still on for C")
        watchB.stop()
        watchC.stop()
    }

    @Test func theDesktopServiceOnARealSessionBusIsUsedAndItsAbsenceIsLoggedOnce() async throws {
        let (a, b, _) = try household()
        let bus = try SessionBus(directory: scratch.home("bus"))
        let agentA = try agent(a, environment: ["DBUS_SESSION_BUS_ADDRESS=\(bus.address)"])
        defer { _ = agentA.stop() }
        let agentB = try agent(b, ["--peer", agentA.address])
        defer { _ = agentB.stop() }
        try a.waitUntil("synced")

        // A bus without a notification service: logged once, not an error; sync goes on.
        try b.run(["shop", "add", "Milk", "Eggs"])
        #expect(agentA.waitForLog("desktop notifications unavailable"))
        #expect(eventually(timeout: 10) { ((try? notificationStatus(a))?["desktopProblem"] as? String)?.contains("no notification service") == true })
        #expect(try notificationStatus(a)["desktopProblemCode"] as? String == "no_service")
        // Said in the reader's language, the system's own detail kept (issue 52, item 14).
        let polish = try a.run(["status", "--lang", "pl"]).stdout
        #expect(polish.contains("żadna usługa powiadomień nie odpowiedziała") && !polish.contains("no notification service"), "\(polish)")
        #expect(notifications(a).count == 1, "the hook still ran")

        // The service appears: the next notification goes to it (a new burst: a task for Anna).
        let service = try bus.startNotificationService(record: scratch.home("notify-calls.jsonl"))
        try b.run(["task", "add", "Dishes", "--assignee", "Anna"])
        #expect(eventually(timeout: 20) { service.calls().count == 1 }, "\(service.calls())")
        let call = try #require(service.calls().first)
        #expect(call["app"] as? String == "House Pulse" && call["summary"] as? String == "Tom assigned you “Dishes”")
        #expect(call["replaces"] as? Int == 0 && (call["hints"] as? [String: String])?["category"] == "house-pulse.assigned")
        #expect(agentA.waitForLog("desktop notifications working again"))
        #expect(agentA.logLines().filter { $0.contains("desktop notifications unavailable") }.count == 1, "logged once")
        #expect(try a.shoppingNames() == ["Milk", "Eggs"])

        // The follow-up replaces the first notification (replace-id), through our binding.
        let desktop = DesktopNotifier(address: bus.address)
        let first = NotificationBatcher.notification(id: 1, replaces: nil, group: .shopping, events: [])
        #expect(await desktop.show(first) == nil)
        let followUp = NotificationBatcher.notification(id: 2, replaces: 1, group: .shopping, events: [])
        #expect(await desktop.show(followUp) == nil)
        let calls = service.calls()
        #expect(calls.count == 3)
        #expect(
            calls[2]["replaces"] as? Int == calls[1]["id"] as? Int && calls[2]["id"] as? Int == calls[1]["id"] as? Int,
            "the follow-up replaced the first: \(calls)")
        // No bus at all: an answer, not a crash.
        #expect(await DesktopNotifier(address: "unix:path=/nonexistent/bus").show(first)?.description.contains("session bus") == true)
    }

    @Test func aClickOnOneOfOurNotificationsComesBackAsItsGroupAndNothingElseDoes() async throws {
        let bus = try SessionBus(directory: scratch.home("bus"))
        let service = try bus.startNotificationService(record: scratch.home("notify-calls.jsonl"))
        let desktop = DesktopNotifier(address: bus.address)
        #expect(await desktop.show(NotificationBatcher.notification(id: 1, replaces: nil, group: .assigned, events: [])) == nil)
        #expect(await desktop.show(NotificationBatcher.notification(id: 2, replaces: nil, group: .shopping, events: [])) == nil)
        let assigned = try #require(service.calls().first?["id"] as? Int), shopping = try #require(service.calls().last?["id"] as? Int)
        // Another program's notification, an action we did not offer (on the assigned one), then
        // a click on the shopping one: the first thing to come back is that click.
        for call in [["Click", "uint32:\(shopping + 100)"], ["Invoke", "uint32:\(assigned)", "string:reply"], ["Click", "uint32:\(shopping)"]] {
            let sent = try Shell.run(
                [
                    "dbus-send", "--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.Notifications",
                    "/org/freedesktop/Notifications", "house.pulse.Test.\(call[0])",
                ] + call.dropFirst())
            #expect(sent.status == 0, "\(sent.stderr)")
        }
        // The first click to come back, or nil at the deadline (20 s; the race ends at the click).
        let first = await withTaskGroup(of: NotificationGroup?.self) { group in
            group.addTask { await desktop.clicks.first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: .seconds(20)) // the deadline, cancelled by the click
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        #expect(first == .shopping)
    }

    @Test func clickingADesktopNotificationOpensTheSignedInPageOnItsTab() throws {
        let (a, b, _) = try household()
        let bus = try SessionBus(directory: scratch.home("bus"))
        let service = try bus.startNotificationService(record: scratch.home("notify-calls.jsonl"))
        // The desktop's xdg-open, on the agent's PATH: records the link it is given (the
        // browser is the test's, below).
        let bin = scratch.home("bin"), opened = scratch.home("opened.txt")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(opened)'\n".write(toFile: bin + "/xdg-open", atomically: true, encoding: .utf8)
        chmod(bin + "/xdg-open", 0o755)
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let agentA = try agent(a, environment: ["DBUS_SESSION_BUS_ADDRESS=\(bus.address)", "PATH=\(path)"])
        defer { _ = agentA.stop() }
        let agentB = try agent(b, ["--peer", agentA.address])
        defer { _ = agentB.stop() }
        try a.waitUntil("synced")
        func links() -> [String] {
            ((try? String(contentsOfFile: opened, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        func click(_ id: Int, _ action: String? = nil) throws {
            let sent = try Shell.run(
                [
                    "dbus-send", "--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.Notifications",
                    "/org/freedesktop/Notifications", "house.pulse.Test.\(action == nil ? "Click" : "Invoke")", "uint32:\(id)",
                ] + (action.map { ["string:\($0)"] } ?? []))
            #expect(sent.status == 0, "\(sent.stderr)")
        }

        // Tom gives Anna a task: her notification offers a default action.
        try b.run(["task", "add", "Dishes", "--assignee", "Anna"])
        #expect(eventually(timeout: 20) { service.calls().count == 1 }, "\(service.calls())")
        let task = try #require(service.calls().first)
        #expect(task["actions"] as? [String] == ["default", "Open House Pulse"], "\(task)")
        let taskID = try #require(task["id"] as? Int)

        // What is not a click on one of ours opens nothing: another program's notification,
        // an action we did not offer, the signal forged by another program on the bus.
        try click(taskID + 100)
        try click(taskID, "reply")
        let forged = try Shell.run([
            "dbus-send", "--bus=\(bus.address)", "--type=signal", "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications.ActionInvoked", "uint32:\(taskID)", "string:default",
        ])
        #expect(forged.status == 0, "\(forged.stderr)")
        // Anna clicks it (after those, on the same bus: they reached the agent first).
        try click(taskID)
        #expect(eventually(timeout: 20) { links().count == 1 }, "\(links())")
        #expect(agentA.waitForLog("a notification was clicked"))
        #expect(agentA.logLines().filter { $0.contains("a notification was clicked") }.count == 1, "only the real click counted")
        let link = try #require(links().first)
        #expect(link.hasPrefix("http://127.0.0.1:") && link.contains("/login?token=") && link.hasSuffix("&tab=tasks"), "\(link)")
        #expect(!agentA.logLines().contains { $0.contains("token=") }, "the link is never logged")

        // The browser opens it: signed in, on the Tasks tab, Tom's task there.
        let page = try Shell.run(["python3", SessionBus.directory + "/web_link.py", link, "Dishes"], timeout: 90)
        let seen = try JSONSerialization.jsonObject(with: Data(page.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(
            seen["signedIn"] as? Bool == true && seen["tab"] as? String == "tasks" && seen["shows"] as? Bool == true,
            "\(page.stdout) \(page.stderr)")
        // Once: the same link again signs nobody in.
        let again = try Shell.run(["python3", SessionBus.directory + "/web_link.py", link], timeout: 90)
        #expect(again.stdout.contains("\"signedIn\": false"), "\(again.stdout)")

        // A shopping notification leads to the Shopping tab.
        try b.run(["shop", "add", "Pears"])
        #expect(eventually(timeout: 20) { service.calls().count == 2 }, "\(service.calls())")
        let shopping = try #require(service.calls().last)
        #expect((shopping["hints"] as? [String: String])?["category"] == "house-pulse.shopping")
        try click(try #require(shopping["id"] as? Int))
        #expect(eventually(timeout: 20) { links().count == 2 }, "\(links())")
        #expect(links().last?.hasSuffix("&tab=shopping") == true && links().last != link, "\(links())")
    }

    @Test func houseFromTheMenuThatCannotOpenSaysWhyOnTheDesktop() throws {
        let bus = try SessionBus(directory: scratch.home("bus"))
        let service = try bus.startNotificationService(record: scratch.home("notify-calls.jsonl"))
        let file = scratch.home("a-file")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        // The menu's command, its output going nowhere a person sees (not a terminal).
        let result = try PulsePeer.run(
            ["open", "--start", "--home", file, "--lang", "en"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(result.status != 0 && result.stderr.contains("is a file, not a directory"), "\(result.stderr)")
        #expect(eventually(timeout: 10) { service.calls().count == 1 }, "\(service.calls())")
        let shown = try #require(service.calls().first)
        #expect(shown["summary"] as? String == "House Pulse could not open", "\(shown)")
        #expect((shown["body"] as? String)?.contains("is a file, not a directory") == true, "\(shown)")
        #expect(shown["actions"] as? [String] == [], "it leads nowhere: \(shown)")
        // From a terminal's command (no --start) the error is for the terminal only.
        let plain = try PulsePeer.run(["open", "--home", file, "--lang", "en"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(plain.status != 0)
        let after = try Shell.run([
            "dbus-send", "--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.Notifications",
            "/org/freedesktop/Notifications", "org.freedesktop.Notifications.GetServerInformation",
        ])
        #expect(after.status == 0 && service.calls().count == 1, "\(service.calls())")

        // An agent runs, but no browser can be opened (no xdg-open on PATH): said on the desktop too.
        let home = try scratch.household("menu")[0]
        let agent = try AgentProcess(home: home.path)
        defer { _ = agent.stop() }
        let noBrowser = scratch.home("no-browser")
        try FileManager.default.createDirectory(atPath: noBrowser, withIntermediateDirectories: true)
        let opened = try PulsePeer.run(
            ["open", "--start", "--home", home.path, "--lang", "en"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": noBrowser])
        #expect(opened.status != 0 && opened.stderr.contains("No web browser could be opened"), "\(opened.stderr)")
        #expect(eventually(timeout: 10) { service.calls().count == 2 }, "\(service.calls())")
        #expect((service.calls().last?["body"] as? String)?.contains("install xdg-utils") == true, "\(service.calls())")
    }

    @Test func watchSeesRemoteAdditionsLiveAndAResumeTokenGivesWhatWasMissed() throws {
        let (a, b, _) = try household()
        let agentA = try agent(a)
        defer { _ = agentA.stop() }
        let agentB = try agent(b, ["--peer", agentA.address])
        defer { _ = agentB.stop() }
        try a.waitUntil("synced")
        let members = try JSONSerialization.jsonObject(with: Data(b.run(["member", "list", "--json"]).stdout.utf8)) as? [[String: Any]] ?? []
        let tom = try #require(members.first { $0["name"] as? String == "Tom" }?["id"] as? String)

        let watch = try Watcher(a, ["--topic", "shopping"])
        try b.run(["shop", "add", "Milk", "Eggs"])
        #expect(watch.waitFor { $0["title"] as? String == "Eggs" })
        let seen = watch.events.filter { $0["type"] as? String == "shopping.added" }
        #expect(seen.map { $0["title"] as? String ?? "" } == ["Milk", "Eggs"], "in order: \(seen)")
        #expect(
            seen.allSatisfy {
                $0["author"] as? String == tom && $0["authorName"] as? String == "Tom" && $0["count"] as? Int == 1
                    && $0["local"] as? Bool == false && $0["machine"] is String && $0["time"] is Int
            })
        #expect(watch.events.allSatisfy { $0["type"] as? String != "peer.connected" }, "topics filter")
        let token = try #require(seen.last?["token"] as? String)
        watch.stop()

        // Missed while away, then live, after the token: nothing lost, nothing twice.
        try b.run(["shop", "add", "Bread"])
        try b.run(["shop", "add", "Butter"])
        try a.waitUntil("synced")
        #expect(eventually(timeout: 10) { (try? a.shoppingNames().contains("Butter")) == true })
        let resumed = try Watcher(a, ["--topic", "shopping", "--since", token])
        #expect(resumed.waitFor { $0["title"] as? String == "Butter" })
        try b.run(["shop", "add", "Jam"])
        #expect(resumed.waitFor { $0["title"] as? String == "Jam" })
        #expect(resumed.events.compactMap { $0["title"] as? String } == ["Bread", "Butter", "Jam"], "\(resumed.events)")

        // Ctrl-C ends a watch cleanly; the agent stopping ends the other, saying so.
        let human = try Watcher(a, json: false, subscribers: 2) // the first one's hang-up was noticed
        human.interrupt()
        #expect(human.exitStatus() == 0)
        _ = agentA.stop()
        #expect(resumed.exitStatus() == 0)
        #expect(resumed.stderr.contains("the agent stopped"), "\(resumed.stderr)")
    }

    @Test func integersInTheLocalAPIAreExact() throws {
        let a = Home(path: scratch.home("a"))
        try a.run(["init"])
        let agentA = try agent(a)
        defer { _ = agentA.stop() }
        try a.run(["shop", "add", "Milk", "Eggs"]) // listed keys one apart
        let raw = try Shell.run([
            "python3", "-c",
            """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            s.sendall(b'{"op":"call","method":"shop.list","params":{}}\\n')
            data = b""
            while not data.endswith(b"\\n"): data += s.recv(65536)
            print(data.decode())
            """, a.path + "/control.sock",
        ])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(raw.stdout.utf8)) as? [String: Any], "\(raw.stderr)")
        let items = try #require(json["result"] as? [[String: Any]])
        let listed = items.compactMap { ($0["listed"] as? String).flatMap { Int64($0) } }
        #expect(listed.count == 2 && listed[1] - listed[0] == 1, "exact decimal strings beyond 2^53: \(raw.stdout)")
    }
}

/// `pulse-peer watch` running in the background, its lines collected.
final class Watcher: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var lines: [String] = []
    private var errorText = ""
    private let newLine = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    /// Returns once the agent counts `subscribers` live-feed subscribers (this one included).
    init(_ home: Home, _ args: [String] = [], json: Bool = true, subscribers: Int = 1) throws {
        process.executableURL = PulsePeer.executable
        process.arguments = ["watch", "--home", home.path] + (json ? ["--json"] : []) + args
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        AgentProcess.readLines(out.fileHandleForReading) { [weak self] line in
            guard let self else { return }
            self.lock.withLock { self.lines.append(line) }
            self.newLine.signal()
        }
        AgentProcess.readLines(err.fileHandleForReading) { [weak self] line in
            guard let self else { return }
            self.lock.withLock { self.errorText += line + "\n" }
        }
        let counted = eventually(timeout: 10) {
            ((try? home.status()["machine"] as? [String: Any])?["subscribers"] as? Int ?? 0) == subscribers
        }
        if !counted { throw AgentProcess.Failure(description: "watch did not subscribe: \(stderr)") }
    }

    deinit { stop() }

    var events: [[String: Any]] {
        lock.withLock { lines }.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
    var stderr: String { lock.withLock { errorText } }

    /// Waits (event-driven, on each new line) until an event matches.
    func waitFor(timeout: TimeInterval = 20, _ match: ([String: Any]) -> Bool) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while true {
            if events.contains(where: match) { return true }
            guard newLine.wait(timeout: deadline) == .success else { return false }
        }
    }

    func interrupt() { kill(process.processIdentifier, SIGINT) }

    /// Waits for the exit (at most 20 s, then kills) and returns its status.
    func exitStatus() -> Int32 {
        if exited.wait(timeout: .now() + 20) == .timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

/// A session bus of the test's own (`dbus-daemon --session`), and the stand-in service.
final class SessionBus: @unchecked Sendable {
    let address: String
    private let daemon: SpawnedProcess
    private var services: [SpawnedProcess] = []

    init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        address = "unix:path=\(directory)/bus"
        daemon = try SpawnedProcess(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=\(address)"])
        guard eventually(timeout: 10, { FileManager.default.fileExists(atPath: directory + "/bus") }) else {
            throw AgentProcess.Failure(description: "dbus-daemon --session did not start")
        }
    }

    final class Service {
        let process: SpawnedProcess
        let record: String
        init(process: SpawnedProcess, record: String) { self.process = process; self.record = record }
        func calls() -> [[String: Any]] {
            guard let text = try? String(contentsOfFile: record, encoding: .utf8) else { return [] }
            return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    /// Tests/, where the Python helpers are.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path
    static let script = directory + "/notification_service.py"

    func startNotificationService(record: String) throws -> Service {
        let process = try SpawnedProcess(["DBUS_SESSION_BUS_ADDRESS=\(address)", "/usr/bin/python3", Self.script, record])
        services.append(process)
        // Ready once the name has an owner (asked of the bus itself).
        let owned = eventually(timeout: 15) {
            let reply = try? Shell.run([
                "dbus-send", "--bus=\(address)", "--print-reply", "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications",
            ])
            return reply?.stdout.contains("boolean true") == true
        }
        guard owned else { throw AgentProcess.Failure(description: "the stand-in notification service did not start (python3-dbus, python3-gi)") }
        return Service(process: process, record: record)
    }

    deinit {
        for service in services { service.terminate() }
        daemon.terminate()
    }
}
