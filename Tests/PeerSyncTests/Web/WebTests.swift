import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
@testable import PeerSync
import PulseNotify
@testable import PulseWeb

/// The web page's rules and router, without sockets: what is refused, what is answered.
struct WebRulesTests {
    @Test(arguments: [
        ("127.0.0.1:47654", "127.0.0.1:47654"), ("localhost:0", "127.0.0.1:0"), ("[::1]:8080", "[::1]:8080"),
        ("127.1.2.3:9", "127.1.2.3:9"), ("OFF", "off"), ("off", "off"),
    ])
    func aLoopbackAddressIsAccepted(text: String, expected: String) throws {
        let address = try WebAddress.parse(text).get()
        #expect(address.map(\.description) ?? "off" == expected)
    }

    @Test(arguments: [
        ("0.0.0.0:47654", "not a loopback address"), ("192.168.1.2:80", "not a loopback address"),
        ("example.com:80", "not a loopback address"), ("[::]:80", "not a loopback address"),
        ("127.0.0.256:80", "not a loopback address"), ("127.0.0.1", "HOST:PORT"), ("127.0.0.1:65536", "HOST:PORT"),
        ("127.0.0.1:-1", "HOST:PORT"), (":80", "HOST:PORT"), ("", "HOST:PORT"), ("127.0.0.1:http", "HOST:PORT"),
    ])
    func anythingElseIsRefusedInASentence(text: String, says: String) {
        guard case let .failure(error) = WebAddress.parse(text) else { Issue.record("accepted \(text)"); return }
        #expect(error.description.contains(says), "\(error)")
        #expect(error.description.hasPrefix("--web"))
    }

    @Test(arguments: [
        ("127.0.0.1:8080", true), ("localhost:8080", true), ("LOCALHOST:8080", true), ("[::1]:8080", true),
        ("127.0.0.1:8081", false), ("127.0.0.1", false), ("localhost", false), ("evil.example:8080", false),
        ("127.0.0.1.nip.io:8080", false), ("192.168.1.5:8080", false), ("", false), ("127.0.0.1:8080 ", false),
    ])
    func theHostHeaderMustNameThisLoopbackPort(header: String, allowed: Bool) {
        #expect(WebRules.hostAllowed(header, host: "127.0.0.1", port: 8080) == allowed)
    }

    /// The agent's tabs are read from index.html (Tests/page/tabs.test.mjs holds them to the
    /// modules'): the seeds' five at least, each an id a link can carry.
    @Test func theTabsALinkMayOpenAreThePagesOwnAndEveryNotificationLeadsToOne() {
        #expect(ComputerPage.tabs.isSuperset(of: ["shopping", "tasks", "backlog", "kids", "more"]))
        #expect(ComputerPage.tabs.allSatisfy { $0.wholeMatch(of: /[a-z-]+/) != nil })
        for group in NotificationGroup.allCases { #expect(ComputerPage.tabs.contains(group.tab), "\(group)") }
    }

    @Test func noHostHeaderIsRefused() { #expect(!WebRules.hostAllowed(nil, host: "127.0.0.1", port: 8080)) }

    @Test(arguments: [
        ("http://127.0.0.1:8080", true), ("http://localhost:8080", true), ("http://[::1]:8080", true),
        ("https://127.0.0.1:8080", false), ("http://127.0.0.1:8081", false), ("http://evil.example", false),
        ("null", false), ("", false), ("http://127.0.0.1:8080/", false),
    ])
    func theOriginMustBeThisPage(header: String, allowed: Bool) {
        #expect(WebRules.originAllowed(header, host: "127.0.0.1", port: 8080) == allowed)
    }

    @Test func cookiesAndQueriesAreRead() {
        #expect(WebRules.cookie("s", in: ["a=1; s=xyz; b=2"]) == "xyz")
        #expect(WebRules.cookie("s", in: ["a=1", " s = v=w "]) == "v=w")
        #expect(WebRules.cookie("s", in: ["ss=1; as=2"]) == nil)
        let (path, query) = WebRules.split(uri: "/login?token=a%2Bb&x=&y=%E2%9C%93+z")
        #expect(path == "/login")
        #expect(query == ["token": "a+b", "x": "", "y": "✓ z"])
        #expect(WebRules.split(uri: "/a?t=%zz").query["t"] == nil)
        #expect(WebRules.split(uri: "/a?t=%ff").query["t"] == nil) // not UTF-8
        // A key written in the query, its value decoded or not (a GET's `params`: WebRouter).
        #expect(WebRules.names("params", inQueryOf: "/api/call/x?a=1&params=%zz"))
        #expect(WebRules.names("params", inQueryOf: "/api/call/x?params"))
        #expect(!WebRules.names("params", inQueryOf: "/api/call/x?xparams=%zz&paramsx=1"))
        #expect(!WebRules.names("params", inQueryOf: "/api/call/params=1"))
    }
}

/// The phone app's document (issue 54): the computer's page without the computer's own
/// sections, marked as a phone's from its first byte, and still whole.
struct PhoneDocumentTests {
    @Test func thePhonesDocumentHoldsEveryTabAndNoneOfTheComputersOwnSections() {
        let computer = String(decoding: WebAssets.indexHTML, as: UTF8.self)
        let phone = String(decoding: WebAssets.phoneIndexHTML, as: UTF8.self)
        #expect(phone.contains("<body class=\"phone\">\n") && !phone.contains("computer-only"))
        #expect(phone.utf8.count < computer.utf8.count * 6 / 10, "\(phone.utf8.count) of \(computer.utf8.count) bytes")
        for kept in ["tab-shopping", "tab-tasks", "tab-backlog", "tab-kids", "tab-more", "away-form", "home-screen", "phone-notices", "sign-out"] {
            #expect(phone.contains("id=\"\(kept)\""), "\(kept)")
        }
        for gone in ["member-list", "categories", "recurring-form", "computers", "phones", "apps", "backup-title", "parents-panel", "goto-categories"] {
            #expect(computer.contains("id=\"\(gone)\"") && !phone.contains("id=\"\(gone)\""), "\(gone)")
        }
        // Each element as whole as before: as many ends as starts, every tag.
        for tag in ["section", "div", "p", "form", "ul", "button", "label", "main", "nav", "dialog"] {
            #expect(phone.matches(of: try! Regex("<\(tag)[ >]")).count == phone.matches(of: try! Regex("</\(tag)>")).count, "<\(tag)>")
        }
    }

    @Test func anElementNamedComputerOnlyGoesWithAllItHoldsAndItsLine() {
        let html =
            "<main>\n  <section class=\"card computer-only\"><section><p>x</p></section></section>\n  <p class=\"computer-only\">y</p> <b>z</b>\n</main>\n"
        #expect(WebAssets.withoutComputerOnly(html) == "<main>\n   <b>z</b>\n</main>\n")
    }
}

struct WebSessionsTests {
    @Test func aSessionHasItsCSRFTokenUntilItEnds() {
        let sessions = WebSessions()
        let (cookie, csrf) = sessions.create()
        #expect(cookie.count == 43 && csrf.count == 43 && cookie != csrf)
        #expect(sessions.csrf(for: cookie) == csrf)
        #expect(sessions.csrf(for: cookie + "x") == nil)
        #expect(sessions.csrf(for: nil) == nil)
        #expect(sessions.csrf(for: String(repeating: "a", count: 10_000)) == nil)
        sessions.end(cookie)
        #expect(sessions.csrf(for: cookie) == nil)
    }

    @Test func anUnusedSessionExpiresAndTheLeastRecentlyUsedGoesFirst() {
        let sessions = WebSessions()
        let old = sessions.create(now: 0)
        #expect(sessions.csrf(for: old.cookie, now: WebSessions.idleLifetime - 1) == old.csrf)
        #expect(sessions.csrf(for: old.cookie, now: 2 * WebSessions.idleLifetime) == nil)
        let first = sessions.create(now: 10)
        for i in 0..<WebSessions.capacity { _ = sessions.create(now: 20 + Int64(i)) }
        #expect(sessions.count == WebSessions.capacity)
        #expect(sessions.csrf(for: first.cookie, now: 100) == nil)
    }

    @Test func sessionsOutliveARestartButNotTheirEnd() {
        let saved = Mutex<Data?>(nil)
        let sessions = WebSessions { data in saved.withLock { $0 = data } }
        let kept = sessions.create()
        let ended = sessions.create()
        sessions.end(ended.cookie)
        let file = saved.withLock { $0 }
        #expect(file.map { String(decoding: $0, as: UTF8.self).contains(kept.cookie) } == false, "no cookie is written")
        let restarted = WebSessions(saved: file)
        #expect(restarted.csrf(for: kept.cookie) == kept.csrf)
        #expect(restarted.csrf(for: ended.cookie) == nil)
        #expect(WebSessions(saved: Data("not json".utf8)).count == 0)
        #expect(WebSessions(saved: Data(#"[{"digest":"zz","csrf":"a","lastUsed":1}]"#.utf8)).count == 0)
    }

    @Test func secretsCompareWhole() {
        #expect(WebSessions.same("abc", "abc"))
        #expect(!WebSessions.same("abc", "abd"))
        #expect(!WebSessions.same("abc", "ab"))
    }
}

struct FrontEndLoginsTests {
    @Test func aTokenWorksOnceWithinItsLifetime() {
        let logins = FrontEndLogins()
        let token = logins.issue(now: 0)
        #expect(token.count == 43)
        #expect(!logins.redeem(token + "x", now: 1))
        #expect(logins.redeem(token, now: 1))
        #expect(!logins.redeem(token, now: 2))
        let late = logins.issue(now: 0)
        #expect(!logins.redeem(late, now: FrontEndLogins.lifetime))
    }

    @Test func atMostEightAreOpen() {
        let logins = FrontEndLogins()
        let tokens = (0...FrontEndLogins.capacity).map { logins.issue(now: Int64($0)) }
        #expect(!logins.redeem(tokens[0], now: 100))
        #expect(tokens.dropFirst().allSatisfy { logins.redeem($0, now: 100) })
    }
}

struct WebRouterTests {
    final class Calls: Sendable {
        let made = Mutex<[(String, [String: JSONValue])]>([])
    }

    /// `choice`: what the household says of the reader's language (the page asks at sign-in);
    /// `welcome`: a computer with no household yet.
    func router(
        calls: Calls = Calls(), choice: LanguageChoice = LanguageChoice(available: Languages.builtIn), welcome: Bool = false
    ) -> (WebRouter<ComputerPage>, FrontEndLogins) {
        let logins = FrontEndLogins()
        let api = LocalAPI(
            callMethod: { method, params, _ in
                if method == "language.get" { return ControlResponse(ok: true, result: try? JSONValue.from(choice)) }
                calls.made.withLock { $0.append((method, params)) }
                if method == "shop.check" { return .refused(.notFound, ["kind": "item", "list": "shopping_list", "handle": "x"]) }
                return ControlResponse(ok: true, result: .array([.string("done")]))
            },
            inviteMethod: { member, minutes in
                calls.made.withLock { $0.append(("invite", ["member": member.map(JSONValue.string) ?? .null, "minutes": .integer(Int64(minutes))])) }
                return ControlResponse(ok: true, result: .object(["code": "123-456-7890"]))
            }, currentStatus: { throw CancellationError() }, feed: EventFeed(), logins: logins,
            home: HouseholdHome.resolve("/tmp/pulse-web-router-tests"), welcome: welcome)
        var router = WebRouter(api: api, sessions: WebSessions(), host: "127.0.0.1", port: 8080)
        router.audience.clientOwner = { _ in getuid() } // this process's requests: its own user's
        return (router, logins)
    }

    func request(_ method: String, _ uri: String, _ headers: [(String, String)] = [], body: String = "") -> WebRequest {
        WebRequest(method: method, uri: uri, headers: [("host", "127.0.0.1:8080")] + headers, body: Array(body.utf8))
    }

    func response(_ reply: WebReply) -> WebResponse? {
        if case let .response(response) = reply { return response }
        return nil
    }

    func header(_ response: WebResponse?, _ name: String) -> String? { response?.headers.first { $0.0 == name }?.1 }

    /// The refusal's code in an API answer (`{"error":{"code":…}}`).
    func errorCode(_ response: WebResponse?) -> String? {
        guard let response, case let .object(body)? = try? JSONDecoder().decode(JSONValue.self, from: Data(response.body)),
            case let .object(error)? = body["error"], case let .string(code)? = error["code"]
        else { return nil }
        return code
    }

    /// Signs in with a fresh token: the cookie header and the CSRF token.
    /// The page's language: this computer's choice, else its member's, else the browser's
    /// Accept-Language (by weight), else English; served with the catalogue it names.
    @Test func theSessionNamesThePagesLanguage() async throws {
        func language(_ choice: LanguageChoice, accept: String?) async throws -> String? {
            let (chosen, logins) = self.router(choice: choice)
            let login = try #require(response(await chosen.respond(to: request("GET", "/login?token=\(logins.issue())"))))
            let cookie = ("cookie", String(try #require(header(login, "Set-Cookie")).split(separator: ";")[0]))
            let headers = [cookie] + (accept.map { [("accept-language", $0)] } ?? [])
            let session = try #require(response(await chosen.respond(to: request("GET", "/api/session", headers))))
            guard case let .object(object) = try JSONDecoder().decode(JSONValue.self, from: Data(session.body)) else { return nil }
            if case let .string(language)? = object["language"] { return language }
            return nil
        }
        let automatic = LanguageChoice(available: Languages.builtIn)
        #expect(try await language(automatic, accept: nil) == "en")
        #expect(try await language(automatic, accept: "fr-FR, de;q=0.8, nl;q=0.9") == "nl")
        #expect(try await language(LanguageChoice(member: "pl", memberName: "Anna", available: Languages.builtIn), accept: "de") == "pl")
        #expect(try await language(LanguageChoice(machine: "de", member: "pl", available: Languages.builtIn), accept: "nl") == "de")
        let (plain, _) = self.router()
        let polish = try #require(response(await plain.respond(to: request("GET", "/messages/pl.json"))))
        #expect(polish.status == 200 && String(decoding: polish.body, as: UTF8.self).contains("orzeszk"))
        #expect(response(await plain.respond(to: request("GET", "/messages/xx.json")))?.status == 404)
        // The agent's own pages in the browser's language.
        let expired = try #require(response(await plain.respond(to: request("GET", "/login?token=nope", [("accept-language", "de")]))))
        #expect(expired.status == 401 && String(decoding: expired.body, as: UTF8.self).contains("lang=\"de\""))
    }

    /// With no household, the session says so and only the welcome's methods are there; with
    /// one, those methods do not exist. "Add a computer" takes the same gates as every POST.
    @Test func theWelcomesMethodsExistOnlyWhileThereIsNoHousehold() async throws {
        for welcome in [true, false] {
            let calls = Calls()
            let (router, logins) = self.router(calls: calls, welcome: welcome)
            let (cookie, csrf) = try await signIn(router, logins)
            let session = try #require(response(await router.respond(to: request("GET", "/api/session", [cookie]))))
            #expect(String(decoding: session.body, as: UTF8.self).contains("\"welcome\":true") == welcome)
            let headers = [cookie, ("origin", "http://127.0.0.1:8080"), ("x-pulse-csrf", csrf), ("content-type", "application/json")]
            let start = response(await router.respond(to: request("POST", "/api/call/welcome.start", headers, body: "{}")))
            let list = response(await router.respond(to: request("POST", "/api/call/shop.list", headers, body: "{}")))
            #expect(start?.status == (welcome ? 200 : 404) && list?.status == (welcome ? 404 : 200))
            #expect(calls.made.withLock { $0.map(\.0) } == [welcome ? "welcome.start" : "shop.list"])
        }
        let calls = Calls()
        let (router, logins) = self.router(calls: calls)
        let (cookie, csrf) = try await signIn(router, logins)
        let good = [cookie, ("origin", "http://127.0.0.1:8080"), ("x-pulse-csrf", csrf), ("content-type", "application/json")]
        let opened = try #require(response(await router.respond(to: request("POST", "/api/invite", good, body: "{\"minutes\":5}"))))
        #expect(opened.status == 200 && String(decoding: opened.body, as: UTF8.self).contains("123-456-7890"))
        for (headers, body, status) in [
            (Array(good.dropFirst(2)) + [good[0]], "{}", 403), (good, "{\"minutes\":61}", 422), (good, "{\"member\":[1]}", 422),
            (good, "{minutes", 400), ([cookie, good[1], good[2]], "{}", 415),
        ] {
            #expect(response(await router.respond(to: request("POST", "/api/invite", headers, body: body)))?.status == status)
        }
        #expect(calls.made.withLock { $0.count } == 1, "only the good request reached the agent")
    }

    /// The computer's page may call every method of the registry but the agent's own plumbing
    /// (issue 55), each as the registry says.
    @Test func thePageAnswersEveryMethodItsDeclarationAllowsAndNoOther() async throws {
        let calls = Calls()
        let (router, logins) = self.router(calls: calls)
        let (cookie, csrf) = try await signIn(router, logins)
        let headers = [cookie, ("origin", "http://127.0.0.1:8080"), ("x-pulse-csrf", csrf), ("content-type", "application/json")]
        for method in HouseholdAPI.registry.methods where method.name != "shop.check" {
            let status = response(await router.respond(to: request("POST", "/api/call/\(method.name)", headers, body: "{}")))?.status
            #expect(status == (method.audiences.contains(.page) ? 200 : 404), "\(method.name)")
        }
        // (The test's agent answers language.get without counting it: the sign-in asks it too.)
        let reached = HouseholdAPI.registry.methods.filter { $0.audiences.contains(.page) && !["shop.check", "language.get"].contains($0.name) }
        #expect(calls.made.withLock { $0.map(\.0) } == reached.map(\.name))
    }

    func signIn(_ router: WebRouter<ComputerPage>, _ logins: FrontEndLogins) async throws -> (cookie: (String, String), csrf: String) {
        let login = try #require(response(await router.respond(to: request("GET", "/login?token=\(logins.issue())"))))
        #expect(login.status == 200)
        let set = try #require(header(login, "Set-Cookie"))
        #expect(set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.hasPrefix("pulse_session_8080="))
        let cookie = ("cookie", String(set.split(separator: ";")[0]))
        let session = try #require(response(await router.respond(to: request("GET", "/api/session", [cookie]))))
        #expect(session.status == 200)
        guard case let .object(object) = try JSONDecoder().decode(JSONValue.self, from: Data(session.body)),
            case let .string(csrf)? = object["csrf"]
        else { throw CancellationError() }
        return (cookie, csrf)
    }

    @Test func aSignInLinkLeadsToItsTabAndNothingElse() async throws {
        let (router, logins) = router()
        for (tab, target) in [
            ("tasks", "/#tasks"), ("kids", "/#kids"), ("shopping", "/#shopping"), ("evil%22%3E%3Cscript%3E", "/"),
            ("//evil.example", "/"), ("", "/"),
        ] {
            let login = try #require(response(await router.respond(to: request("GET", "/login?token=\(logins.issue())&tab=\(tab)"))))
            let html = String(decoding: login.body, as: UTF8.self)
            #expect(login.status == 200 && header(login, "Set-Cookie") != nil, "\(tab)")
            #expect(html.contains("content=\"0;url=\(target)\"") && html.contains("href=\"\(target)\""), "\(tab): \(html)")
        }
    }

    @Test func aSignInLinkFromAnotherAccountsBrowserIsRefusedAndStaysItsOwners() async throws {
        var (router, logins) = router()
        let token = logins.issue()
        for stranger in [{ @Sendable (_: WebRequest) -> UInt32? in getuid() &+ 1 }, { @Sendable (_: WebRequest) -> UInt32? in nil }] {
            router.audience.clientOwner = stranger
            let refused = try #require(response(await router.respond(to: request("GET", "/login?token=\(token)"))))
            #expect(refused.status == 401 && header(refused, "Set-Cookie") == nil)
        }
        router.audience.clientOwner = { _ in getuid() }
        let login = try #require(response(await router.respond(to: request("GET", "/login?token=\(token)"))))
        #expect(login.status == 200 && header(login, "Set-Cookie") != nil, "the link still works for its owner")
    }

    @Test func theKernelsSocketTableNamesTheClientsOwner() {
        // /proc/net/tcp as Linux prints it (x86: each address word in little-endian order).
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:B8A3 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0
               1: 0100007F:1F90 0100007F:B8A3 01 00000000:00000000 00:00000000 00000000     0        0 4243 1 0
               2: 0200007F:B8A3 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1001        0 4244 1 0
               3: 0100007F:B8A5 0100007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0
               4: 0100007F:B8A6 0100007F:1F90 05 00000000:00000000 00:00000000 00000000     0        0 0 3 0
            """
        let server = (address: "127.0.0.1", port: 0x1F90)
        #expect(SocketOwner.uid(in: table, client: ("127.0.0.1", 0xB8A3), server: server) == 1000)
        #expect(SocketOwner.uid(in: table, client: ("127.0.0.2", 0xB8A3), server: server) == 1001)
        #expect(SocketOwner.uid(in: table, client: ("127.0.0.1", 0xB8A4), server: server) == nil)
        #expect(SocketOwner.uid(in: table, client: ("not an address", 0xB8A3), server: server) == nil)
        // A client that closed at once leaves a TIME_WAIT or FIN_WAIT2 row of uid 0, no inode: nobody's.
        #expect(SocketOwner.uid(in: table, client: ("127.0.0.1", 0xB8A5), server: server) == nil)
        #expect(SocketOwner.uid(in: table, client: ("127.0.0.1", 0xB8A6), server: server) == nil)
        #expect(SocketOwner.uid(in: table, client: ("::ffff:127.0.0.1", 0xB8A3), server: server) == 1000, "an IPv4-mapped address")
        let six = """
              sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid
               0: 00000000000000000000000001000000:C001 00000000000000000000000001000000:1F90 01 00000000:00000000 00:00000000 00000000  1002        0 4245 1 0
               1: 0000000000000000FFFF00000100007F:C002 0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 00000000  1003        0 4246 1 0
            """
        #expect(SocketOwner.uid(in: six, client: ("::1", 0xC001), server: ("::1", 0x1F90)) == 1002)
        #expect(SocketOwner.uid(in: six, client: ("127.0.0.1", 0xC002), server: server) == 1003, "IPv4 on a dual-stack socket")
    }

    @Test func thePageIsServedWithItsDefencesAndTheWrongHostGetsNothing() async throws {
        let (router, _) = router()
        for path in ["/", "/app.css", "/icon.svg", "/messages/en.json"] + WebAssets.modules.keys.sorted() {
            let page = try #require(response(await router.respond(to: request("GET", path))))
            #expect(page.status == 200 && !page.body.isEmpty)
            #expect(header(page, "X-Frame-Options") == "DENY")
            #expect(header(page, "Content-Security-Policy")?.contains("script-src 'self';") == true)
            #expect(header(page, "Content-Security-Policy")?.contains("unsafe-inline") == false)
        }
        let html = String(decoding: WebAssets.indexHTML, as: UTF8.self)
        #expect(html.firstMatch(of: /<script(?![^>]*\ssrc=)/) == nil, "no inline script")
        #expect(html.firstMatch(of: /\son[a-z]+=/) == nil && html.firstMatch(of: /\sstyle=/) == nil, "no inline handlers or styles")
        let foreign = WebRequest(method: "GET", uri: "/", headers: [("host", "evil.example:8080")])
        #expect(response(await router.respond(to: foreign))?.status == 421)
        #expect(response(await router.respond(to: request("GET", "/nowhere")))?.status == 404)
        #expect(response(await router.respond(to: request("GET", "/messages/xx.json")))?.status == 404)
        #expect(response(await router.respond(to: request("GET", "/messages/../Package.json")))?.status == 404)
        // Every module the entry imports (and they theirs) is served: no 404 in the browser.
        for (path, source) in WebAssets.modules {
            for match in String(decoding: source, as: UTF8.self).matches(of: /from "\.\/([a-z]+\.js)"|import "\.\/([a-z]+\.js)"/) {
                let imported = "/" + String(match.output.1 ?? match.output.2 ?? "")
                #expect(WebAssets.modules[imported] != nil, "\(path) imports \(imported)")
            }
        }
        #expect(response(await router.respond(to: request("POST", "/")))?.status == 405)
    }

    /// The phone app's worker caches exactly the modules the agent serves (their paths written in
    /// place of its placeholder), under a cache named by the page's version; and the agent serves
    /// every module of the folder (`PageFiles`, written at build time: no list to keep).
    @Test func theServiceWorkerCachesEveryModuleTheAgentServes() async throws {
        let (router, _) = router()
        let worker = try #require(response(await router.respond(to: request("GET", "/sw.js"))))
        let text = String(decoding: worker.body, as: UTF8.self)
        let listed = try #require(text.firstMatch(of: /const MODULES = \[([^\]]*)\];/)).output.1
        let paths = listed.split(separator: ", ").map { String($0.dropFirst().dropLast()) } // each in quotes
        #expect(paths == WebAssets.modules.keys.sorted() && paths.count > 20)
        let folder = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../../Sources/PulseWeb/Resources")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(paths == files.filter { $0.hasSuffix(".js") && $0 != "sw.js" }.map { "/" + $0 }.sorted())
        #expect(!text.contains("house-pulse-modules") && !text.contains("\"house-pulse-version\""))
        #expect(text.firstMatch(of: /const CACHE = "house-pulse-[0-9a-f]{12}";/) != nil)
    }

    @Test func thePageAsksAtOnceForEveryModuleItsScriptImportsAndNoneOfTheComputersParts() async throws {
        let (router, _) = router()
        let page = try #require(response(await router.respond(to: request("GET", "/"))))
        let text = String(decoding: page.body, as: UTF8.self)
        let preloaded = Set(text.matches(of: /<link rel="modulepreload" href="([^"]+)">/).map { String($0.output.1) })
        // Every module main.js reaches by its static imports, the newest ones too, each served.
        #expect(preloaded.isSuperset(of: ["/api.js", "/page.js", "/store.js", "/shopping.js", "/tasks.js", "/live.js", "/connection.js"]))
        #expect(preloaded.isSubset(of: Set(WebAssets.modules.keys)) && !preloaded.contains("/main.js"))
        // The computer's own parts are imported on demand (main.js, loadDesk), never preloaded.
        #expect(preloaded.isDisjoint(with: ["/parents.js", "/welcome.js", "/machines.js", "/computer.js", "/phones.js", "/apps.js"]))
        // Each preloaded module is imported by main.js or by a preloaded module.
        for path in preloaded {
            let importers = ["/main.js"] + preloaded.filter { $0 != path }
            #expect(
                importers.contains { String(decoding: WebAssets.modules[$0]!, as: UTF8.self).contains("\"." + path + "\"") },
                "\(path) is preloaded but imported by no module the page loads")
        }
        // After the script, once each.
        #expect(text.components(separatedBy: "modulepreload").count == preloaded.count + 1)
        #expect(text.range(of: "src=\"/main.js\"")!.lowerBound < text.range(of: "modulepreload")!.lowerBound)
    }

    @Test func withoutASessionTheAPIAnswers401() async throws {
        let calls = Calls()
        let (router, _) = router(calls: calls)
        for (method, path) in [("GET", "/api/session"), ("GET", "/api/status"), ("GET", "/api/events"), ("POST", "/api/call/shop.add")] {
            let answer = try #require(response(await router.respond(to: request(method, path, [("cookie", "pulse_session_8080=forged")]))))
            #expect(answer.status == 401)
        }
        #expect(calls.made.withLock { $0.isEmpty })
    }

    @Test func aLoginTokenWorksOnce() async throws {
        let (router, logins) = router()
        let token = logins.issue()
        #expect(response(await router.respond(to: request("GET", "/login?token=\(token)")))?.status == 200)
        let again = try #require(response(await router.respond(to: request("GET", "/login?token=\(token)"))))
        #expect(again.status == 401 && header(again, "Set-Cookie") == nil)
        #expect(response(await router.respond(to: request("GET", "/login")))?.status == 401)
    }

    @Test func aCallNeedsThePagesOriginAndTokenAndPassesItsParameters() async throws {
        let calls = Calls()
        let (router, logins) = router(calls: calls)
        let (cookie, csrf) = try await signIn(router, logins)
        let json = ("content-type", "application/json")
        let body = #"{"names":["Milk"]}"#
        let refused: [[(String, String)]] = [
            [cookie, json, ("x-pulse-csrf", csrf)], // no Origin
            [cookie, json, ("x-pulse-csrf", csrf), ("origin", "http://evil.example")],
            [cookie, json, ("origin", "http://127.0.0.1:8080")], // no token
            [cookie, json, ("origin", "http://127.0.0.1:8080"), ("x-pulse-csrf", String(csrf.dropLast()) + (csrf.hasSuffix("A") ? "B" : "A"))],
        ]
        for (headers, code) in zip(refused, ["wrong_origin", "wrong_origin", "missing_token", "missing_token"]) {
            let answer = response(await router.respond(to: request("POST", "/api/call/shop.add", headers, body: body)))
            #expect(answer?.status == 403 && errorCode(answer) == code)
        }
        #expect(errorCode(response(await router.respond(to: request("GET", "/api/status")))) == "not_signed_in")
        #expect(calls.made.withLock { $0.isEmpty })
        let good = [cookie, json, ("origin", "http://localhost:8080"), ("x-pulse-csrf", csrf)]
        let done = try #require(response(await router.respond(to: request("POST", "/api/call/shop.add", good, body: body))))
        #expect(done.status == 200 && String(decoding: done.body, as: UTF8.self) == #"{"result":["done"]}"#)
        #expect(calls.made.withLock { $0.map(\.0) } == ["shop.add"])
        #expect(calls.made.withLock { $0.first?.1 } == ["names": .array([.string("Milk")])])
        // The household's refusal is the answer, as a sentence.
        let refusal = try #require(response(await router.respond(to: request("POST", "/api/call/shop.check", good, body: #"{"item":"x"}"#))))
        #expect(refusal.status == 422 && String(decoding: refusal.body, as: UTF8.self).contains(#""code":"not_found""#))
        // Bad input never reaches the household.
        let before = calls.made.withLock { $0.count }
        let nope = response(await router.respond(to: request("POST", "/api/call/nope", good, body: "{}")))
        #expect(nope?.status == 404 && errorCode(nope) == "unknown_method")
        for bad in ["[1]", "{"] {
            let answer = response(await router.respond(to: request("POST", "/api/call/shop.add", good, body: bad)))
            #expect(answer?.status == 400 && errorCode(answer) == "not_json")
        }
        let form = [cookie, ("content-type", "text/plain"), ("origin", "http://127.0.0.1:8080"), ("x-pulse-csrf", csrf)]
        let plain = response(await router.respond(to: request("POST", "/api/call/shop.add", form, body: body)))
        #expect(plain?.status == 415 && errorCode(plain) == "not_json")
        let delete = response(await router.respond(to: request("DELETE", "/api/call/shop.add", good)))
        #expect(delete?.status == 405 && errorCode(delete) == "method_not_allowed")
        let nowhere = response(await router.respond(to: request("GET", "/api/nowhere", [cookie])))
        #expect(nowhere?.status == 404 && errorCode(nowhere) == "no_such_path")
        #expect(calls.made.withLock { $0.count } == before)
    }

    /// A method that only reads may be asked with GET (WebKitGTK opens a connection, a TLS
    /// handshake on a phone, for every POST), with the page's token as a POST and no other
    /// Origin (a browser names none on a GET of its page's own); a method that writes may not,
    /// and the session names those that may.
    @Test func aCallThatOnlyReadsMayBeAskedWithGETHeldToTheSameOriginAndToken() async throws {
        let calls = Calls()
        let (router, logins) = router(calls: calls)
        let (cookie, csrf) = try await signIn(router, logins)
        let sessionAnswer = try #require(response(await router.respond(to: request("GET", "/api/session", [cookie]))))
        guard case let .object(session)? = try? JSONDecoder().decode(JSONValue.self, from: Data(sessionAnswer.body)),
            case let .array(named)? = session["reads"]
        else { Issue.record("the session names no reads"); return }
        let reads = named.compactMap { if case let .string(name) = $0 { name } else { nil } }
        #expect(reads.contains("shop.list") && reads.contains("shop.lists") && !reads.contains("shop.add"))
        #expect(reads == HouseholdAPI.registry.reads(for: .page) && reads.allSatisfy { HouseholdAPI.registry[$0]?.writes == false })

        let params = "?params=%7B%22list%22%3A%22Weekend%22%7D" // {"list":"Weekend"}
        let refused: [([(String, String)], String)] = [
            ([cookie, ("x-pulse-csrf", csrf), ("origin", "http://evil.example")], "wrong_origin"),
            ([cookie, ("origin", "http://127.0.0.1:8080")], "missing_token"),
            ([cookie], "missing_token"), // a link or an image of another site: no token
            ([cookie, ("x-pulse-csrf", String(csrf.dropLast()) + (csrf.hasSuffix("A") ? "B" : "A"))], "missing_token"),
        ]
        for (headers, code) in refused {
            let answer = response(await router.respond(to: request("GET", "/api/call/shop.list" + params, headers)))
            #expect(answer?.status == 403 && errorCode(answer) == code)
        }
        #expect(calls.made.withLock { $0.isEmpty })
        let good = [cookie, ("origin", "http://127.0.0.1:8080"), ("x-pulse-csrf", csrf)]
        let write = response(await router.respond(to: request("GET", "/api/call/shop.add?params=%7B%22names%22%3A%5B%22Milk%22%5D%7D", good)))
        #expect(write?.status == 405 && errorCode(write) == "method_not_allowed" && header(write, "Allow") == "POST")
        for bad in ["?params=%5B1%5D", "?params=%7B", "?params=%ZZ"] {
            let answer = response(await router.respond(to: request("GET", "/api/call/shop.list" + bad, good)))
            #expect(answer?.status == 400 && errorCode(answer) == "not_json")
        }
        #expect(response(await router.respond(to: request("GET", "/api/call/nope", good)))?.status == 404)
        #expect(calls.made.withLock { $0.isEmpty })

        let read = try #require(response(await router.respond(to: request("GET", "/api/call/shop.list" + params, good))))
        #expect(read.status == 200 && String(decoding: read.body, as: UTF8.self) == #"{"result":["done"]}"#)
        #expect(header(read, "Cache-Control") == "no-store")
        // A browser names no Origin on a GET of the page's own: the token is enough.
        let plain = try #require(response(await router.respond(to: request("GET", "/api/call/shop.lists", [cookie, ("x-pulse-csrf", csrf)]))))
        #expect(plain.status == 200)
        #expect(calls.made.withLock { $0.map(\.0) } == ["shop.list", "shop.lists"])
        #expect(calls.made.withLock { $0.map(\.1) } == [["list": .string("Weekend")], [:]])
    }

    @Test func theLiveFeedResumesFromTheLastEventID() async throws {
        let (router, logins) = router()
        let (cookie, _) = try await signIn(router, logins)
        guard case let .events(resume) = await router.respond(to: request("GET", "/api/events", [cookie, ("last-event-id", "ab-3")])) else {
            Issue.record("not a stream"); return
        }
        #expect(resume == "ab-3")
        guard case let .events(none) = await router.respond(to: request("GET", "/api/events?resume=", [cookie])) else { return }
        #expect(none == nil)
    }

    @Test func signingOutEndsTheSession() async throws {
        let (router, logins) = router()
        let (cookie, csrf) = try await signIn(router, logins)
        let out = try #require(
            response(await router.respond(to: request("POST", "/api/logout", [cookie, ("origin", "http://127.0.0.1:8080"), ("x-pulse-csrf", csrf)]))))
        #expect(out.status == 200 && header(out, "Set-Cookie")?.contains("Max-Age=0") == true)
        #expect(response(await router.respond(to: request("GET", "/api/session", [cookie])))?.status == 401)
    }
}
