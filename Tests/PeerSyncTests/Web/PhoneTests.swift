import FoundationEssentials
import Synchronization
import Testing
@testable import PeerSync
@testable import PulseWeb
import PulseCA

/// Adding a phone (issue 42), without sockets: the invitation's token works once, within its
/// lifetime; nothing is given before the computer answers; an approval's cookie is handed
/// over once; a token seen over plain HTTP is burnt.
struct PhonePairingTests {
    @Test func aTokenWorksOnceAndMakesARequestThatWaits() throws {
        let pairing = PhonePairing()
        let (token, expires) = pairing.invite(name: "Anna's phone", member: "Anna", now: 1000)
        #expect(expires == 1000 + PhonePairing.lifetime)
        let (request, waiting) = try #require(pairing.redeem(token, address: "10.0.0.2", now: 2000))
        #expect(request.name == "Anna's phone" && request.member == "Anna" && request.address == "10.0.0.2")
        #expect(pairing.redeem(token, address: "10.0.0.3", now: 2001) == nil, "used up")
        #expect(pairing.collect(waiting, now: 2002)?.answer == .pending)
        #expect(pairing.pending(now: 2002).map(\.id) == [request.id])
    }

    @Test func aTokenPastItsLifetimeOrWrongIsRefused() {
        let pairing = PhonePairing()
        let (token, _) = pairing.invite(name: "x", member: nil, now: 0)
        #expect(pairing.redeem(token + "x", address: "a", now: 1) == nil)
        #expect(pairing.redeem(String(repeating: "a", count: 200), address: "a", now: 1) == nil)
        #expect(pairing.redeem(token, address: "a", now: PhonePairing.lifetime) == nil)
    }

    @Test func aNewInvitationReplacesTheOpenOne() {
        let pairing = PhonePairing()
        let (first, _) = pairing.invite(name: "one", member: nil, now: 0)
        let (second, _) = pairing.invite(name: "two", member: nil, now: 1)
        #expect(pairing.redeem(first, address: "a", now: 2) == nil)
        #expect(pairing.redeem(second, address: "a", now: 2)?.request.name == "two")
    }

    @Test func approvalHandsTheSessionOverOnceAndDeclineGivesNothing() throws {
        let pairing = PhonePairing()
        let (token, _) = pairing.invite(name: "p", member: nil, now: 0)
        let (request, waiting) = try #require(pairing.redeem(token, address: "a", now: 1))
        #expect(!pairing.settle("nope", .approved(cookie: "cookie")))
        #expect(!pairing.settle(request.id, .pending), "pending is no answer")
        #expect(pairing.settle(request.id, .approved(cookie: "the-cookie")))
        #expect(!pairing.settle(request.id, .declined), "answered once")
        #expect(pairing.collect(waiting, now: 2)?.answer == .approved(cookie: "the-cookie"))
        #expect(pairing.collect(waiting, now: 3) == nil, "handed over once")

        let (again, _) = pairing.invite(name: "q", member: nil, now: 4)
        let (declined, waitingToo) = try #require(pairing.redeem(again, address: "a", now: 5))
        #expect(pairing.settle(declined.id, .declined))
        #expect(pairing.collect(waitingToo, now: 6)?.answer == .declined)
        #expect(pairing.collect("someone else's", now: 6) == nil)
    }

    @Test func aTokenSeenOverPlainHTTPIsBurnt() {
        let pairing = PhonePairing()
        let (token, _) = pairing.invite(name: "p", member: nil, now: 0)
        pairing.burn("another")
        #expect(pairing.invitationExpires(now: 1) != nil)
        pairing.burn(token)
        #expect(pairing.invitationExpires(now: 1) == nil)
        #expect(pairing.redeem(token, address: "a", now: 1) == nil)
    }

    @Test func atMostFourRequestsWait() throws {
        let pairing = PhonePairing()
        var ids: [String] = []
        for i in 0..<(PhonePairing.capacity + 2) {
            let (token, _) = pairing.invite(name: "p\(i)", member: nil, now: Int64(i))
            ids.append(try #require(pairing.redeem(token, address: "a", now: Int64(i))).request.id)
        }
        #expect(pairing.pending(now: 10).map(\.id) == Array(ids.suffix(PhonePairing.capacity)))
    }
}

/// The phones' side of the router: its own Host names, HTTPS origins, a Secure cookie, the
/// phone app's methods only, no computer sign-in link, no backup, no "Add a computer".
struct PhoneRouterTests {
    /// One phone is signed in: cookie `good`, member `m1`, CSRF token `tok`.
    static let phone = PhoneSession(id: "p1", member: "m1", csrf: "tok")

    final class SignedOut: Sendable { let ids = Mutex<[String]>([]) }

    func makeRouter(calls: WebRouterTests.Calls = .init(), signedOut: SignedOut = SignedOut()) -> WebRouter<PhoneSite> {
        let api = LocalAPI(
            callMethod: { method, params, caller in
                let made = caller.audience == .phone ? "\(method) as \(caller.phoneMember ?? "nobody")" : method
                calls.made.withLock { $0.append((made, params)) }
                return ControlResponse(ok: true, result: .array([]))
            },
            inviteMethod: { _, _ in
                Issue.record("a phone opened an invitation")
                return ControlResponse(ok: false)
            }, currentStatus: { throw CancellationError() }, feed: EventFeed(), logins: FrontEndLogins(),
            home: HouseholdHome.resolve("/tmp/pulse-phone-router-tests"))
        var site = PhoneSite(
            port: 47655, home: api.home, hosts: { ["192.168.1.5:47655", "house.local:47655"] }, pairing: PhonePairing(),
            identify: { $0 == "good" ? Self.phone : nil },
            identifyRoaming: { $0 == "p1.roams" ? PhoneSession(id: "p1", member: "m1", csrf: "") : nil },
            roaming: { _ in "p1.roams" },
            agents: { .array([.object(["machine": "b", "name": "Tom's laptop", "urls": ["https://192.168.1.6:47655"], "self": false])]) },
            signOut: { phone in signedOut.ids.withLock { $0.append(phone.id) } }, computer: "house.local")
        site.renew = { phone in phone.id == "p1" ? "new-cookie-of-\(phone.id)" : nil }
        return WebRouter(api: api, audience: site)
    }

    func request(
        _ method: String, _ uri: String, host: String = "192.168.1.5:47655", _ headers: [(String, String)] = [], body: String = ""
    )
        -> WebRequest
    {
        WebRequest(method: method, uri: uri, headers: [("host", host)] + headers, body: Array(body.utf8), remote: "192.168.1.20")
    }

    func response(_ reply: WebReply) -> WebResponse? {
        if case let .response(response) = reply { return response }
        return nil
    }

    static let signedIn: [(String, String)] = [("cookie", "pulse_phone_47655=good")]

    @Test(arguments: [
        ("192.168.1.5:47655", 200), ("HOUSE.local:47655", 200), ("127.0.0.1:47655", 421), ("192.168.1.5", 421),
        ("bank.example.com", 421), ("192.168.1.6:47655", 421),
    ])
    func onlyThisComputersHomeNetworkNamesAreAnswered(host: String, status: Int) async {
        #expect(response(await makeRouter().respond(to: request("GET", "/", host: host)))?.status == status)
    }

    @Test func thePhoneAppsMethodsAnswerAsItsMemberAndTheComputersAdministrationDoesNot() async throws {
        let calls = WebRouterTests.Calls()
        let router = makeRouter(calls: calls)
        func post(_ method: String, origin: String = "https://192.168.1.5:47655", cookie: String = "good", csrf: String = "tok") async -> Int? {
            response(
                await router.respond(
                    to: request(
                        "POST", "/api/call/\(method)",
                        [
                            ("cookie", "pulse_phone_47655=\(cookie)"), ("origin", origin), ("x-pulse-csrf", csrf),
                            ("content-type", "application/json"),
                        ], body: "{}")))?.status
        }
        #expect(await post("shop.add") == 200)
        #expect(await post("task.done") == 200)
        for method in ["machine.remove", "member.add", "kids.pin.check", "kids.adjust", "settings.set", "whoami.set", "phones.get", "phone.add"] {
            #expect(await post(method) == 404, "\(method)")
        }
        // Every method of the registry: answered exactly where its declaration allows a phone.
        var allowed: [String] = []
        for method in HouseholdAPI.registry.methods {
            let phone = method.audiences.contains(.phone)
            #expect(await post(method.name) == (phone ? 200 : 404), "\(method.name)")
            if phone { allowed.append("\(method.name) as m1") }
        }
        #expect(allowed.contains("kids.redeem as m1") && !allowed.contains("kids.adjust as m1"))
        calls.made.withLock { $0.removeLast(allowed.count) }
        #expect(await post("shop.add", origin: "http://192.168.1.5:47655") == 403, "an http origin")
        #expect(await post("shop.add", origin: "https://evil.example") == 403)
        #expect(await post("shop.add", csrf: "other") == 403)
        #expect(await post("shop.add", cookie: "removed-or-made-up") == 401)
        #expect(calls.made.withLock { $0.map(\.0) } == ["shop.add as m1", "task.done as m1"])
    }

    /// A phone whose own agent does not answer uses this one from that agent's address: its
    /// roaming credential as a bearer (CORS from any https:// page, no cookie, no CSRF token);
    /// nothing without a valid one, and still only the phone app's methods.
    @Test func aPhoneOfAnotherAgentIsServedByItsRoamingCredentialAcrossOrigins() async throws {
        let calls = WebRouterTests.Calls()
        let router = makeRouter(calls: calls)
        let other = "https://192.168.1.6:47655"
        let preflight = try #require(
            response(
                await router.respond(
                    to: request("OPTIONS", "/api/call/shop.add", [("origin", other), ("access-control-request-method", "POST")]))))
        #expect(preflight.status == 204)
        #expect(preflight.headers.contains { $0 == ("Access-Control-Allow-Origin", other) })
        #expect(preflight.headers.contains { $0.0 == "Access-Control-Allow-Headers" && $0.1.contains("authorization") })
        #expect(!preflight.headers.contains { $0.0 == "Access-Control-Allow-Credentials" }, "cookies never cross")
        func post(_ method: String, bearer: String?, origin: String = other) async -> WebResponse? {
            var headers: [(String, String)] = [("origin", origin), ("content-type", "application/json")]
            if let bearer { headers.append(("authorization", "Bearer \(bearer)")) }
            return response(await router.respond(to: request("POST", "/api/call/\(method)", headers, body: "{}")))
        }
        let added = try #require(await post("shop.add", bearer: "p1.roams"))
        #expect(
            added.status == 200 && added.headers.contains { $0 == ("Access-Control-Allow-Origin", other) },
            "\(added.status) \(String(decoding: added.body, as: UTF8.self))")
        #expect(await post("shop.add", bearer: "p1.forged")?.status == 401)
        #expect(await post("shop.add", bearer: nil)?.status == 401)
        #expect(await post("machine.remove", bearer: "p1.roams")?.status == 404)
        #expect(calls.made.withLock { $0.map(\.0) } == ["shop.add as m1"])
        // Its session names the household's other agents and its credential for them.
        let session = try #require(
            response(await router.respond(to: request("GET", "/api/session", [("origin", other), ("authorization", "Bearer p1.roams")]))))
        let said = String(decoding: session.body, as: UTF8.self)
        #expect(session.status == 200 && said.contains(#""roaming":"p1.roams""#) && said.contains("Tom's laptop"), "\(said)")
        // Only from an https:// page, and never the page of the address asked (it has its cookie).
        let before = calls.made.withLock { $0.count }
        for stranger in ["http://192.168.1.6:47655", "https://192.168.1.5:47655", "https://192.168.1.5:47655".uppercased()] {
            let preflight = response(
                await router.respond(
                    to: request("OPTIONS", "/api/call/shop.add", [("origin", stranger), ("access-control-request-method", "POST")])))
            #expect(preflight?.status == 403, "\(stranger)")
            #expect(await post("shop.add", bearer: "p1.roams", origin: stranger)?.status == 403, "\(stranger)")
        }
        #expect(calls.made.withLock { $0.count } == before, "nothing more was called")
        // This agent's page at another of its names or at an address it no longer has (a phone
        // paired by address before a new lease): the phone's own agent, used by its credential.
        for moved in ["https://house.local:47655", "https://192.168.1.9:47655"] {
            #expect(await post("shop.add", bearer: "p1.roams", origin: moved)?.status == 200, "\(moved)")
        }
    }

    /// A phone whose cookie expired unused (half a year) signs in again with one tap: its roaming
    /// credential, from its own page only, for a new cookie; nothing without a valid credential,
    /// from another page, or by a cookie.
    @Test func aPhoneWhoseCookieExpiredSignsInAgainByItsRoamingCredentialFromItsOwnPage() async throws {
        let router = makeRouter()
        func renew(_ headers: [(String, String)]) async -> WebResponse? {
            response(await router.respond(to: request("POST", "/api/session/renew", headers)))
        }
        let own = ("origin", "https://192.168.1.5:47655")
        let renewed = try #require(await renew([own, ("authorization", "Bearer p1.roams")]))
        #expect(renewed.status == 200, "\(String(decoding: renewed.body, as: UTF8.self))")
        let cookie = renewed.headers.first { $0.0 == "Set-Cookie" }?.1 ?? ""
        #expect(cookie.contains("=new-cookie-of-p1;") && cookie.contains("HttpOnly") && cookie.contains("Max-Age=\(PhoneSite.cookieLifetime)"), "\(cookie)")
        #expect(await renew([own, ("authorization", "Bearer p1.forged")])?.status == 401)
        #expect(await renew([("origin", "https://192.168.1.6:47655"), ("authorization", "Bearer p1.roams")])?.status == 403)
        #expect(await renew([("authorization", "Bearer p1.roams")])?.status == 403, "no origin")
        let byCookie = await renew(Self.signedIn + [own, ("x-pulse-csrf", "tok")])
        #expect(byCookie?.status != 200 && byCookie?.headers.contains { $0.0 == "Set-Cookie" } == false)
    }

    @Test func noComputerSignInBackupOrInvitationOnThePhonesSideAndSignOutRemovesThePhone() async {
        let signedOut = SignedOut()
        let router = makeRouter(signedOut: signedOut)
        let writes = Self.signedIn + [("origin", "https://192.168.1.5:47655"), ("x-pulse-csrf", "tok"), ("content-type", "application/json")]
        #expect(response(await router.respond(to: request("GET", "/login?token=x")))?.status == 404)
        #expect(response(await router.respond(to: request("GET", "/api/backup", Self.signedIn)))?.status == 404)
        #expect(response(await router.respond(to: request("POST", "/api/invite", writes, body: "{}")))?.status == 404)
        let answer = response(await router.respond(to: request("GET", "/api/session", Self.signedIn)))
        let said = String(decoding: answer?.body ?? [], as: UTF8.self)
        #expect(answer?.status == 200 && said.contains(#""phone":true"#) && !said.contains(#""home""#), "\(said)")
        #expect(response(await router.respond(to: request("POST", "/api/logout", writes)))?.status == 200)
        #expect(signedOut.ids.withLock { $0 } == ["p1"])
    }

    @Test func pairingSetsASecureWaitingCookieAndThenTheSession() async throws {
        let router = makeRouter()
        let pairing = router.audience.pairing
        let (token, _) = pairing.invite(name: "Anna's phone", member: nil)
        let first = try #require(response(await router.respond(to: request("GET", "/pair?token=\(token)"))))
        #expect(first.status == 200)
        let setCookie = try #require(first.headers.first { $0.0 == "Set-Cookie" }?.1)
        #expect(setCookie.hasPrefix("pulse_pairing_47655=") && setCookie.contains("HttpOnly") && setCookie.contains("Secure"))
        #expect(setCookie.contains("SameSite=Strict"))
        let waiting = String(setCookie.dropFirst("pulse_pairing_47655=".count).prefix { $0 != ";" })
        #expect(response(await router.respond(to: request("GET", "/pair?token=\(token)")))?.status == 401, "once")
        let still = try #require(response(await router.respond(to: request("GET", "/pair", [("cookie", "pulse_pairing_47655=\(waiting)")]))))
        #expect(still.status == 200 && !still.headers.contains { $0.1.hasPrefix("pulse_phone_") })
        let id = try #require(pairing.pending().first?.id)
        #expect(pairing.settle(id, .approved(cookie: "good")))
        let done = try #require(response(await router.respond(to: request("GET", "/pair", [("cookie", "pulse_pairing_47655=\(waiting)")]))))
        let session = try #require(done.headers.first { $0.0 == "Set-Cookie" && $0.1.hasPrefix("pulse_phone_47655=") }?.1)
        #expect(session.hasPrefix("pulse_phone_47655=good;"))
        #expect(session.contains("Secure") && session.contains("HttpOnly") && session.contains("SameSite=Strict"))
    }
}

/// A phone's notifications (issue 42): the desktop's rules for the phone's member — never its
/// own changes (wherever they were made), others' additions after the 2 s debounce, in the
/// reader's words.
struct MemberNoticesTests {
    func added(_ title: String, by author: String, local: Bool) -> HouseholdEvent {
        HouseholdEvent(type: .shoppingAdded, entity: "shopping_item", title: title, author: author, authorName: author.capitalized, time: 0, local: local)
    }

    @Test func othersAdditionsAreToldOnceDebouncedAndTheMembersOwnNever() throws {
        var notices = MemberNotices(member: "anna", words: .english)
        #expect(notices.receive(added("Milk", by: "anna", local: false), now: 0).isEmpty)
        #expect(notices.nextWake == nil, "the member's own change: nothing waits")
        // Made on the computer serving the phone (local there) by someone else: told.
        #expect(notices.receive(added("Grapes", by: "tom", local: true), now: 1_000).isEmpty)
        let wake = try #require(notices.nextWake)
        #expect(notices.tick(now: wake - 1).isEmpty)
        let shown = notices.tick(now: wake)
        #expect(shown.count == 1 && shown[0].summary.contains("Grapes") && shown[0].group == "shopping")
        #expect(shown[0].body.contains("Tom"))
    }

    @Test func aPhoneOfNobodyInParticularHearsOfEveryone() throws {
        var notices = MemberNotices(member: nil, words: .english)
        _ = notices.receive(added("Tea", by: "anna", local: false), now: 0)
        let wake = try #require(notices.nextWake)
        #expect(notices.tick(now: wake).map(\.count) == [1])
    }
}

/// The phones' certificates follow the computer's addresses (issue 42): a new address is in
/// the next leaf, and the Host names the listener answers follow.
struct PhoneTLSTests {
    final class Network: Sendable {
        let now = Mutex((names: ["house.local"], addresses: ["192.168.1.5"]))
    }

    @Test func aNewAddressIsCoveredByTheNextLeafAndAnswered() throws {
        let dir = try TemporaryDirectory()
        let certificates = try AgentCertificates.openOrCreate(home: dir.url, household: "The Smiths", machine: "house.local", now: Date())
        let network = Network()
        let tls = try PhoneTLS(certificates: certificates, look: { network.now.withLock { $0 } }, recheck: .zero)
        #expect(tls.hosts(port: 47655) == ["house.local:47655", "192.168.1.5:47655"])
        let first = tls.context()
        network.now.withLock { $0.addresses = ["192.168.1.5", "10.0.0.7"] }
        let second = tls.context()
        #expect(second !== first, "a new leaf for the new address")
        #expect(tls.covered.addresses == ["192.168.1.5", "10.0.0.7"])
        #expect(tls.hosts(port: 47655).contains("10.0.0.7:47655"))
        #expect(tls.context() === second, "nothing changed: the same leaf")
    }

    @Test func onlyPrivateIPv4AddressesAndTheDefaultRoutesFirst() {
        #expect(PhoneTLS.defaultRouteInterface("Iface\tDestination\tGateway\neth1\t0001A8C0\t00000000\neth0\t00000000\t0101A8C0\n") == "eth0")
        #expect(PhoneTLS.defaultRouteInterface("Iface\tDestination\n") == nil)
    }
}
