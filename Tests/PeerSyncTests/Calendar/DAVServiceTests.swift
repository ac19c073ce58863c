import Foundation
import Synchronization
import Testing
@testable import PulseCalDAV
@testable import PulseCalendar
@testable import PulseHousehold
@testable import PulseModel

/// The household as a CalDAV client meets it (issue 59): signing in with an app password, the
/// collections and their to-dos read, and what is refused. The agent's listener is left out
/// (the multi-process test has it); here the service reads a household of its own.
@Suite struct DAVServiceTests {
    /// The household, read and written one at a time, as the store's actor does.
    final class Host: DAVHost, @unchecked Sendable {
        let household: Household
        let lock = NSLock()
        init(_ household: Household) { self.household = household }
        func read<T: Sendable>(_ body: @escaping @Sendable (Household) throws -> T) async throws -> T {
            try lock.withLock { try body(household) }
        }
        func write<T: Sendable>(_ body: @escaping @Sendable (Household) throws -> T) async throws -> T {
            try lock.withLock { try body(household) }
        }
    }

    final class Clock: Sendable {
        let time = Mutex<Int64>(1_800_000_000_000)
        func advance(_ ms: Int64) { time.withLock { $0 += ms } }
        var now: Int64 { time.withLock { $0 } }
    }

    let dir: TemporaryDirectory
    let household: Household
    let clock = Clock()
    let service: DAVService
    let tom: Member
    let password: String

    init() throws {
        dir = try TemporaryDirectory()
        household = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Tom"])
        tom = try #require(try household.members().first { $0.name == "Tom" })
        password = try household.createAppPassword(label: "Tom's Reminders", member: "Tom").password
        let clock = self.clock
        service = DAVService(host: Host(household), now: { clock.now })
    }

    static func basic(_ user: String, _ password: String) -> (name: String, value: String) {
        ("authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    func ask(
        _ method: String, _ path: String, depth: String? = nil, body: String = "", user: String = "Tom", password: String? = nil,
        from client: String = "192.168.1.20", extra: [(String, String)] = []
    ) async -> DAVAnswer {
        var headers = [Self.basic(user, password ?? self.password)] + extra.map { (name: $0.0.lowercased(), value: $0.1) }
        if let depth { headers.append(("depth", depth)) }
        if !body.isEmpty { headers.append(("content-type", method == "PUT" ? "text/calendar" : "application/xml")) }
        return await service.respond(DAVHTTPRequest(method: method, path: path, headers: headers, body: Array(body.utf8)), client: client)
    }

    static func propfind(_ props: String) -> String {
        #"<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/"><d:prop>"#
            + props + "</d:prop></d:propfind>"
    }

    /// Each response's href and its found properties, as a client reads a 207.
    static func responses(_ answer: DAVAnswer) throws -> [(href: String, props: [DAVElement], status: String?)] {
        #expect(answer.status == 207, "\(answer.status) \(answer.text)")
        let root = try DAVXML.parse(answer.body)
        return root.children(DAVXML.dav, "response").map { response in
            let found = response.children(DAVXML.dav, "propstat").filter { $0.child(DAVXML.dav, "status")?.text == "HTTP/1.1 200 OK" }
            return (
                response.child(DAVXML.dav, "href")?.text ?? "", found.flatMap { $0.child(DAVXML.dav, "prop")?.children ?? [] },
                response.child(DAVXML.dav, "status")?.text
            )
        }
    }

    @Test func aClientGivenTheBareHostFindsItsMemberTheirHomeAndTheHouseholdsLists() async throws {
        let wellKnown = await service.respond(DAVHTTPRequest(method: "GET", path: "/.well-known/caldav"), client: "192.168.1.20")
        #expect(wellKnown.status == 301 && wellKnown.header("Location") == "/dav/", "no credentials needed to learn where it is")
        let who = try Self.responses(await ask("PROPFIND", "/", depth: "0", body: Self.propfind("<d:current-user-principal/>")))
        let principal = "/dav/\(tom.id)/"
        #expect(who.first?.props.first?.child(DAVXML.dav, "href")?.text == principal)
        let home = try Self.responses(await ask("PROPFIND", principal, depth: "0", body: Self.propfind("<c:calendar-home-set/><d:displayname/>")))
        #expect(home.first?.props.first { $0.name == "calendar-home-set" }?.child(DAVXML.dav, "href")?.text == "/dav/\(tom.id)/lists/")
        #expect(home.first?.props.first { $0.name == "displayname" }?.text == "Tom")
        _ = try household.addShoppingItems(["Milk"])
        let list = try household.addShoppingList("Hardware store")
        let anna = try #require(try household.members().first { $0.name == "Anna" })
        _ = try household.addTask("Hoover", assignee: "Anna", due: "2026-12-07")
        let lists = try Self.responses(
            await ask("PROPFIND", "/dav/\(tom.id)/lists/", depth: "1", body: Self.propfind("<d:resourcetype/><d:displayname/><cs:getctag/>")))
        let names = Dictionary(lists.map { ($0.href, $0.props.first { $0.name == "displayname" }?.text ?? "") }, uniquingKeysWith: { a, _ in a })
        let base = "/dav/\(tom.id)/lists/"
        #expect(names[base + "shopping/"] == "Shopping list")
        #expect(names[base + "list-\(try #require(list.id))/"] == "Hardware store")
        #expect(names[base + "tasks/"] == "Tasks" && names[base + "tasks-\(anna.id)/"] == "Anna's tasks")
        #expect(lists.filter { $0.href != base }.allSatisfy { $0.props.first { $0.name == "resourcetype" }?.child(DAVXML.caldav, "calendar") != nil })
    }

    @Test func eachToDoIsReadWithItsETagByPropfindQueryMultigetAndGet() async throws {
        let milk = try household.addShoppingItems(["Milk"])[0]
        let bread = try household.addShoppingItems(["Bread"])[0]
        _ = try household.checkShoppingItem("Bread")
        let shopping = "/dav/\(tom.id)/lists/shopping/"
        let listed = try Self.responses(await ask("PROPFIND", shopping, depth: "1", body: Self.propfind("<d:getetag/>")))
        #expect(Set(listed.map(\.href)) == [shopping, shopping + "\(milk.id).ics", shopping + "\(bread.id).ics"])
        let got = await ask("GET", shopping + "\(milk.id).ics")
        #expect(got.status == 200 && got.header("Content-Type")?.hasPrefix("text/calendar") == true)
        let todo = try #require(try ICalendar.parse(got.body).components.first)
        #expect(todo.first("SUMMARY")?.text == "Milk" && todo.first("STATUS")?.value == "NEEDS-ACTION" && todo.first("UID")?.value == milk.id)
        #expect(got.header("ETag") == listed.first { $0.href.hasSuffix("\(milk.id).ics") }?.props.first?.text)
        // What the caldav library asks for "todos not completed" (Home Assistant's list).
        let open = #"""
            <c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>
            <c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"><c:prop-filter name="STATUS">
            <c:text-match negate-condition="yes">COMPLETED</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>
            """#
        let found = try Self.responses(await ask("REPORT", shopping, depth: "1", body: open))
        #expect(found.map(\.href) == [shopping + "\(milk.id).ics"], "bought bread is completed")
        #expect(found.first?.props.first { $0.name == "calendar-data" }?.text.contains("SUMMARY:Milk") == true)
        let multiget = #"""
            <c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop>
            <d:href>\#(shopping)\#(bread.id).ics</d:href><d:href>\#(shopping)nothing.ics</d:href></c:calendar-multiget>
            """#
        let both = try Self.responses(await ask("REPORT", shopping, depth: "1", body: multiget))
        #expect(both.map(\.href) == [shopping + "\(bread.id).ics", shopping + "nothing.ics"])
        #expect(both.last?.status == "HTTP/1.1 404 Not Found")
    }

    @Test func aSyncTokenAnswersWhatChangedSinceItAndAnUnknownOneAsksForAFreshSync() async throws {
        let milk = try household.addShoppingItems(["Milk"])[0]
        let shopping = "/dav/\(tom.id)/lists/shopping/"
        func sync(_ token: String?) async -> DAVAnswer {
            let tokenElement = token.map { "<d:sync-token>\($0)</d:sync-token>" } ?? "<d:sync-token/>"
            return await ask(
                "REPORT", shopping,
                body: #"<d:sync-collection xmlns:d="DAV:">\#(tokenElement)<d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"#)
        }
        func token(_ answer: DAVAnswer) throws -> String { try #require(try DAVXML.parse(answer.body).child(DAVXML.dav, "sync-token")?.text) }
        let first = await sync(nil)
        let start = try token(first)
        #expect(try Self.responses(first).map(\.href) == [shopping + "\(milk.id).ics"])
        let again = await sync(start)
        #expect(try Self.responses(again).isEmpty && (try token(again)) == start, "nothing changed: nothing sent")
        let eggs = try household.addShoppingItems(["Eggs"])[0]
        _ = try household.checkShoppingItem("Milk")
        let moved = await sync(start)
        let changed = try Self.responses(moved)
        #expect(Set(changed.map(\.href)) == [shopping + "\(milk.id).ics", shopping + "\(eggs.id).ics"], "the new one and the bought one")
        #expect(try token(moved) != start)
        _ = try household.deleteShoppingItem("Eggs")
        let gone = try Self.responses(await sync(try token(moved)))
        #expect(gone.map(\.href) == [shopping + "\(eggs.id).ics"] && gone.first?.status == "HTTP/1.1 404 Not Found")
        // A token this agent never gave (another agent's, or one from before a restart).
        let unknown = await sync("urn:house-pulse:sync:0123456789abcdef")
        #expect(unknown.status == 403 && unknown.text.contains("valid-sync-token"), "\(unknown.text)")
        // The token a PROPFIND gives (DAVx⁵ reads it there first) is one to sync from.
        let props = try Self.responses(await ask("PROPFIND", shopping, depth: "0", body: Self.propfind("<d:sync-token/>")))
        let fromPropfind = try #require(props.first?.props.first?.text)
        _ = try household.addShoppingItems(["Butter"])
        #expect(try Self.responses(await sync(fromPropfind)).count == 1)
    }

    @Test func theTokensRememberedAreBoundedTheLeastRecentlyUsedForgottenFirst() {
        var history = DAVSyncHistory()
        for n in 0..<(DAVSyncHistory.maxTokens + 10) { history.remember("t\(n)", collection: "shopping", objects: [("a.ics", "\"\(n)\"")]) }
        #expect(history.count == DAVSyncHistory.maxTokens)
        #expect(history.recall("t0", collection: "shopping") == nil && history.recall("t300", collection: "shopping") == nil)
        #expect(history.recall("t265", collection: "shopping") == ["a.ics": "\"265\""])
        #expect(history.recall("t265", collection: "tasks") == nil, "a token is its list's")
        let big = (0..<DAVSyncHistory.maxObjects).map { ("\($0).ics", "\"e\"") }
        history.remember("big", collection: "shopping", objects: big)
        #expect(history.recall("big", collection: "shopping")?.count == DAVSyncHistory.maxObjects)
        #expect(history.recall("t265", collection: "shopping") == nil, "room made for it")
    }

    @Test func noWrongRevokedOrOtherMembersCredentialsReadAnything() async throws {
        let none = await service.respond(DAVHTTPRequest(method: "PROPFIND", path: "/dav/", headers: [("depth", "0")]), client: "10.0.0.9")
        #expect(none.status == 401 && none.header("WWW-Authenticate")?.hasPrefix("Basic realm=") == true)
        // Two wrong passwords are answered 401; the third starts the wait, which even the right one respects.
        for _ in 0..<3 { #expect(await ask("PROPFIND", "/dav/", depth: "0", password: "aaaa-bbbb-cccc-dddd-eeee", from: "10.0.0.9").status == 401) }
        let waiting = await ask("PROPFIND", "/dav/", depth: "0", from: "10.0.0.9")
        #expect(waiting.status == 429 && waiting.header("Retry-After") == "5")
        #expect(await ask("PROPFIND", "/dav/", depth: "0", from: "10.0.0.10").status == 207, "another address is not held up")
        clock.advance(5_000)
        #expect(await ask("PROPFIND", "/dav/", depth: "0", from: "10.0.0.9").status == 207)
        // A user name nobody has is a wrong password too (one scrypt against a hash of the form
        // the household keeps, so its time does not tell which names exist), counted per address.
        let parts = DAVService.nobody.hash.split(separator: "$").map(String.init)
        #expect(parts.count == 6 && parts[1] == "16384" && Data(base64Encoded: parts[4])?.count == 16 && Data(base64Encoded: parts[5])?.count == 32)
        #expect(!Household.appPasswordMatches(password, DAVService.nobody))
        #expect(await ask("PROPFIND", "/dav/", depth: "0", user: "Zed", from: "10.0.0.11").status == 401)
        // Another member's space is not found, as a path that names nothing.
        let anna = try #require(try household.members().first { $0.name == "Anna" })
        #expect(await ask("PROPFIND", "/dav/\(anna.id)/lists/", depth: "1").status == 404)
        // Revoked while the app was signed in: refused at its next request.
        let record = try #require(try household.appPasswords().first)
        _ = try household.revokeAppPassword(record.id)
        let revoked = await ask("PROPFIND", "/dav/", depth: "0")
        #expect(revoked.status == 401, "\(revoked.text)")
    }

    static func todo(_ uid: String, _ lines: String...) -> String {
        (["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//test//EN", "BEGIN:VTODO", "UID:\(uid)", "DTSTAMP:20261205T101010Z"] + lines
            + ["END:VTODO", "END:VCALENDAR", ""]).joined(separator: "\r\n")
    }

    func put(_ path: String, _ body: String, headers extra: [(String, String)] = []) async -> DAVAnswer {
        var headers = [Self.basic("Tom", password), ("content-type", "text/calendar; charset=utf-8")]
        headers += extra.map { ($0.0.lowercased(), $0.1) }
        return await service.respond(DAVHTTPRequest(method: "PUT", path: path, headers: headers, body: Array(body.utf8)), client: "192.168.1.20")
    }

    func etag(_ path: String) async -> String { await ask("GET", path).header("ETag") ?? "" }

    @Test func aClientsEditIsOneHouseholdWriteAndAStaleOneChangesNothing() async throws {
        let milk = try household.addShoppingItems(["Milk"])[0]
        let path = "/dav/\(tom.id)/lists/shopping/\(milk.id).ics"
        let seen = await etag(path)
        // Renamed, as the app saw it.
        let renamed = await put(path, Self.todo(milk.id, "SUMMARY:Oat milk", "STATUS:NEEDS-ACTION", "SEQUENCE:1"), headers: [("If-Match", seen)])
        #expect(renamed.status == 204, "\(renamed.text)")
        #expect(try household.shoppingItems().map(\.name) == ["Oat milk"])
        // Another edit from what the app saw before the rename: 412, nothing changed.
        let stale = await put(path, Self.todo(milk.id, "SUMMARY:Soy milk"), headers: [("If-Match", seen)])
        #expect(stale.status == 412 && stale.text.contains("changed since it was read"))
        #expect(try household.shoppingItems().map(\.name) == ["Oat milk"])
        // Completed in the app (as the caldav library does it): bought, into the restock pool.
        let done = await put(
            path, Self.todo(milk.id, "SUMMARY:Oat milk", "STATUS:COMPLETED", "COMPLETED:20261205T101010Z"), headers: [("If-Match", await etag(path))])
        #expect(done.status == 204)
        #expect(try household.shoppingItems(.restock).map(\.id) == [milk.id])
        let before = try household.shoppingItems(.restock)
        for (what, body, extra, status, code) in [
            (
                "a due day for an item", Self.todo(milk.id, "SUMMARY:Oat milk", "STATUS:COMPLETED", "DUE;VALUE=DATE:20261207"), [(String, String)](), 403,
                "not_for_item"
            ),
            (
                "a rename with a due day", Self.todo(milk.id, "SUMMARY:Soy milk", "STATUS:COMPLETED", "DUE;VALUE=DATE:20261207"), [], 403,
                "not_for_item"
            ),
            ("another UID", Self.todo("not-milk", "SUMMARY:Oat milk", "STATUS:COMPLETED"), [], 403, "uid_changed"),
            (
                "create only, over one that exists", Self.todo(milk.id, "SUMMARY:Oat milk", "STATUS:COMPLETED"), [("If-None-Match", "*")], 412,
                "precondition_failed"
            ),
            ("a cancelled one", Self.todo(milk.id, "SUMMARY:Oat milk", "STATUS:CANCELLED"), [], 403, "unsupported_status"),
        ] {
            let answer = await put(path, body, headers: extra)
            #expect(answer.status == status && answer.header("X-Pulse-Refusal") == code, "\(what): \(answer.status) \(answer.text)")
            #expect(try household.shoppingItems(.restock) == before, "\(what) changed nothing")
        }
        // `If-Match: *` (what the caldav library sends holding no ETag): it exists, so it is changed;
        // on a name that is not there, 412.
        #expect(await put(path, Self.todo(milk.id, "SUMMARY:Oat milk", "STATUS:COMPLETED"), headers: [("If-Match", "*")]).status == 204)
        #expect(await put("/dav/\(tom.id)/lists/shopping/none.ics", Self.todo("none", "SUMMARY:None"), headers: [("If-Match", "*")]).status == 412)
        #expect(try household.shoppingItems().isEmpty)
        // Two changes in one PUT (renamed and reopened: restocked) and a property the household
        // does not map, kept and given back; then dropped when the app drops it.
        let both = await put(path, Self.todo(milk.id, "SUMMARY:Milk", "STATUS:NEEDS-ACTION", "PRIORITY:1"), headers: [("If-Match", await etag(path))])
        #expect(both.status == 204, "\(both.text)")
        #expect(try household.shoppingItems().map(\.name) == ["Milk"])
        #expect(await ask("GET", path).text.contains("PRIORITY:1\r\n"))
        #expect(await put(path, Self.todo(milk.id, "SUMMARY:Milk", "STATUS:COMPLETED")).status == 204)
        #expect(!(await ask("GET", path).text.contains("PRIORITY")))
        // Deleted: a stale tag first (nothing), then the right one.
        #expect(await ask("DELETE", path, extra: [("If-Match", seen)]).status == 412)
        #expect(try household.shoppingItems(.restock).count == 1)
        #expect(await ask("DELETE", path, extra: [("If-Match", await etag(path))]).status == 204)
        #expect(try household.shoppingItems(.restock).isEmpty)
        #expect(try household.shoppingItems().isEmpty)
        #expect(await ask("GET", path).status == 404)
    }

    @Test func theFocusRuleRefusesAReopenedTaskInTheMembersLanguage() async throws {
        for title in ["Dishes", "Laundry", "Hoover"] { _ = try household.addTask(title) }
        let old = try household.addTask("Windows", force: true)
        _ = try household.completeTask(old.id)
        let path = "/dav/\(tom.id)/lists/tasks/\(old.id).ics"
        let reopen = Self.todo(old.id, "SUMMARY:Windows", "STATUS:NEEDS-ACTION")
        let english = await put(path, reopen)
        #expect(
            english.status == 403 && english.header("X-Pulse-Refusal") == "focus_rule" && english.text.contains("at most 3 active tasks"), "\(english.text)")
        _ = try household.acting(as: tom.id).setLanguage(scope: "member", language: "pl")
        let polish = await put(path, reopen)
        #expect(polish.status == 403 && polish.text.contains("reguła skupienia"), "\(polish.text)")
        #expect(try household.tasks().first { $0.id == old.id }?.done == true)
        // All or nothing: a rename with the refused reopen leaves the title as it was.
        let both = await put(path, Self.todo(old.id, "SUMMARY:Windows and doors", "STATUS:NEEDS-ACTION", "PRIORITY:2"))
        #expect(both.status == 403 && both.header("X-Pulse-Refusal") == "focus_rule")
        let windows = try #require(try household.tasks().first { $0.id == old.id })
        let servedWindows = await ask("GET", path).text
        #expect(windows.title == "Windows" && windows.done && !servedWindows.contains("PRIORITY"))
        // A task's title, due day and assignee change together, as one write by the app's member.
        let dishes = try #require(try household.tasks().first { $0.title == "Dishes" })
        let edited = await put(
            "/dav/\(tom.id)/lists/tasks/\(dishes.id).ics",
            Self.todo(dishes.id, "SUMMARY:Dishes and pans", "STATUS:NEEDS-ACTION", "DUE;VALUE=DATE:20261207", "X-PULSE-ASSIGNEE:Anna"))
        #expect(edited.status == 204, "\(edited.text)")
        let after = try #require(try household.tasks().first { $0.id == dishes.id })
        #expect(after.title == "Dishes and pans" && after.due == "2026-12-07" && after.assignee == "Anna")
        // A project cannot be completed over CalDAV (it becomes a task on the page).
        let garden = try household.addCategory("Garden")
        let fence = try household.addBacklogItem("Paint the fence", to: garden.id)
        let project = await put("/dav/\(tom.id)/lists/backlog-\(garden.id)/\(fence.id).ics", Self.todo(fence.id, "SUMMARY:Paint the fence", "STATUS:COMPLETED"))
        #expect(project.status == 403 && project.header("X-Pulse-Refusal") == "project_done")
    }

    /// A repeating task's occurrence, made once a period for the whole household, is a task like
    /// any over CalDAV: ticked off in an app it is done for its period, and deleted there that
    /// period's is not made again (the next period's is).
    @Test func aRepeatingTasksOccurrenceDoneOrDeletedInAnAppStaysSoForItsPeriod() async throws {
        let template = try household.addRecurringTemplate("Water the plants", schedule: "daily", assignee: "Tom")
        let today = Days.today()
        #expect(try household.generateRecurringTasks(on: today) == 1)
        let id = "rt-\(template.id)-\(today)"
        let path = "/dav/\(tom.id)/lists/tasks-\(tom.id)/\(id).ics"
        #expect(await ask("GET", path).status == 200)
        let due = "DUE;VALUE=DATE:" + today.description.replacing("-", with: "")
        let done = await put(
            path, Self.todo(id, "SUMMARY:Water the plants", "STATUS:COMPLETED", due, "X-PULSE-ASSIGNEE:Tom"), headers: [("If-Match", await etag(path))])
        #expect(done.status == 204, "\(done.text)")
        #expect(try household.tasks().first { $0.id == id }?.done == true)
        #expect(try household.generateRecurringTasks(on: today) == 0, "done: not made again this period")
        #expect(await ask("DELETE", path, extra: [("If-Match", await etag(path))]).status == 204)
        #expect(try household.generateRecurringTasks(on: today) == 0, "deleted: not made again this period")
        #expect(await ask("GET", path).status == 404)
        #expect(try !household.tasks().contains { $0.id == id })
        #expect(try household.generateRecurringTasks(on: Days.adding(1, to: today)) == 1, "the next period's is made")
    }

    @Test func anAppsNewToDoIsTheHouseholdsOwnAdditionKeptUnderTheNameAndUIDTheAppGaveIt() async throws {
        let lists = "/dav/\(tom.id)/lists"
        let eggs = Self.todo(
            "2F1C7A2E-app-eggs", "SUMMARY:Eggs", "STATUS:NEEDS-ACTION", "PRIORITY:1", "X-APPLE-SORT-ORDER:123", "BEGIN:VALARM", "ACTION:DISPLAY",
            "TRIGGER:-PT15M", "DESCRIPTION:Eggs", "END:VALARM")
        let made = await put("\(lists)/shopping/2F1C7A2E-app-eggs.ics", eggs, headers: [("If-None-Match", "*")])
        #expect(made.status == 201, "\(made.text) \(made.header("X-Pulse-Refusal") ?? "")")
        let item = try #require(try household.shoppingItems().first { $0.name == "Eggs" })
        let served = await ask("GET", "\(lists)/shopping/2F1C7A2E-app-eggs.ics")
        for line in ["UID:2F1C7A2E-app-eggs", "PRIORITY:1", "X-APPLE-SORT-ORDER:123", "BEGIN:VALARM", "TRIGGER:-PT15M"] {
            #expect(served.text.contains(line + "\r\n"), "\(line) in \(served.text)")
        }
        #expect(await ask("GET", "\(lists)/shopping/\(item.id).ics").status == 404)
        // The same PUT again as create-only: it exists. Another name with its UID: refused.
        #expect(await put("\(lists)/shopping/2F1C7A2E-app-eggs.ics", eggs, headers: [("If-None-Match", "*")]).status == 412)
        let twin = await put("\(lists)/shopping/other-name.ics", eggs)
        #expect(twin.status == 403 && twin.header("X-Pulse-Refusal") == "uid_taken")
        // A name in the restock pool is brought back, as on the page: the app's to-do is that item now.
        let bread = try household.addShoppingItems(["Bread"], on: nil)[0]
        _ = try household.checkShoppingItem(bread.id)
        let back = await put("\(lists)/shopping/app-bread.ics", Self.todo("app-bread", "SUMMARY:bread"))
        #expect(back.status == 201, "\(back.text)")
        #expect(try household.shoppingItems().map(\.id).contains(bread.id) && household.shoppingItems(.restock).isEmpty)
        #expect(await ask("GET", "\(lists)/shopping/\(bread.id).ics").status == 404)
        let breadServed = await ask("GET", "\(lists)/shopping/app-bread.ics").text
        #expect(breadServed.contains("UID:app-bread\r\n") && breadServed.contains("SUMMARY:Bread\r\n"), "the pool's spelling kept: \(breadServed)")
        // A task in Anna's collection is hers; a project in its category.
        let anna = try #require(try household.members().first { $0.name == "Anna" })
        #expect(await put("\(lists)/tasks-\(anna.id)/t1.ics", Self.todo("t1", "SUMMARY:Call the plumber", "DUE;VALUE=DATE:20261209")).status == 201)
        let task = try #require(try household.tasks().first { $0.title == "Call the plumber" })
        #expect(task.assignee == "Anna" && task.due == "2026-12-09")
        #expect(await ask("GET", "\(lists)/tasks/t1.ics").status == 200)
        let garden = try household.addCategory("Garden")
        #expect(await put("\(lists)/backlog-\(garden.id)/p1.ics", Self.todo("p1", "SUMMARY:New shed")).status == 201)
        #expect(try household.backlog().first { $0.id == garden.id }?.items.map(\.title) == ["New shed"])
        // Refused, nothing added: the addition is undone with the rest (a due day for an item),
        // too much kept, a new task past the focus rule.
        let items = try household.shoppingItems(), tasks = try household.tasks()
        let dueItem = await put("\(lists)/shopping/app-flour.ics", Self.todo("app-flour", "SUMMARY:Flour", "DUE;VALUE=DATE:20261207"))
        #expect(dueItem.status == 403 && dueItem.header("X-Pulse-Refusal") == "not_for_item", "\(dueItem.text)")
        let huge = await put("\(lists)/shopping/app-huge.ics", Self.todo("app-huge", "SUMMARY:Huge", "X-NOTE:" + String(repeating: "a", count: 5000)))
        #expect(huge.status == 413 && huge.header("X-Pulse-Refusal") == "too_much_kept", "\(huge.status)")
        for title in ["Dishes", "Laundry"] { _ = try household.addTask(title) }
        let fourth = await put("\(lists)/tasks/t4.ics", Self.todo("t4", "SUMMARY:Hoover"))
        #expect(fourth.status == 403 && fourth.header("X-Pulse-Refusal") == "focus_rule")
        #expect(try household.shoppingItems() == items && household.tasks().count == tasks.count + 2)
        #expect(try household.calendarObjects().count == 4)
        // Deleted by the app: gone from the household and the collection.
        #expect(await ask("DELETE", "\(lists)/shopping/2F1C7A2E-app-eggs.ics").status == 204)
        #expect(try !household.shoppingItems().contains { $0.id == item.id })
        #expect(await ask("GET", "\(lists)/shopping/2F1C7A2E-app-eggs.ics").status == 404)
    }

    @Test func twoToDosAnAppNamedAlikeAreServedUnderDistinctNamesTheSameEverywhere() {
        let records = [
            "b": CalendarObjectRecord(id: "b", kind: .item, uid: "u", href: "x.ics", kept: nil),
            "a": CalendarObjectRecord(id: "a", kind: .item, uid: "u", href: "x.ics", kept: nil),
            "c": CalendarObjectRecord(id: "c", kind: .item, uid: "c", href: "c.ics", kept: nil),
        ]
        let names = DAVShelf.names(["c", "b", "a", "d"], records)
        #expect(names["a"]! == ("x.ics", "u") && names["b"]! == ("b.ics", "b") && names["c"]! == ("c.ics", "c") && names["d"] == nil)
    }
}
