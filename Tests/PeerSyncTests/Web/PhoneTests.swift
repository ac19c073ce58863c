import FoundationEssentials
import Synchronization
import Testing
@testable import PeerSync
@testable import PulseWeb

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
        #expect(!pairing.answer("nope", approve: true) { _ in "cookie" })
        #expect(pairing.answer(request.id, approve: true) { _ in "the-cookie" })
        #expect(!pairing.answer(request.id, approve: false) { _ in "" }, "answered once")
        #expect(pairing.collect(waiting, now: 2)?.answer == .approved(cookie: "the-cookie"))
        #expect(pairing.collect(waiting, now: 3) == nil, "handed over once")

        let (again, _) = pairing.invite(name: "q", member: nil, now: 4)
        let (declined, waitingToo) = try #require(pairing.redeem(again, address: "a", now: 5))
        #expect(
            pairing.answer(declined.id, approve: false) { _ in
                Issue.record("no session for a decline"); return ""
            })
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
    func router(calls: WebRouterTests.Calls = .init()) -> (WebRouter, WebSessions) {
        let api = LocalAPI(
            callMethod: { method, params in
                calls.made.withLock { $0.append((method, params)) }
                return ControlResponse(ok: true, result: .array([]))
            },
            inviteMethod: { _, _ in
                Issue.record("a phone opened an invitation")
                return ControlResponse(ok: false)
            }, currentStatus: { throw CancellationError() }, feed: EventFeed(), logins: FrontEndLogins(),
            home: HouseholdHome.resolve("/tmp/pulse-phone-router-tests"))
        let sessions = WebSessions()
        let site = PhoneSite(hosts: { ["192.168.1.5:47655", "house.local:47655"] }, pairing: PhonePairing(), computer: "house.local")
        return (WebRouter(api: api, sessions: sessions, host: "0.0.0.0", port: 47655, phones: site), sessions)
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

    @Test(arguments: [
        ("192.168.1.5:47655", 200), ("HOUSE.local:47655", 200), ("127.0.0.1:47655", 421), ("192.168.1.5", 421),
        ("bank.example.com", 421), ("192.168.1.6:47655", 421),
    ])
    func onlyThisComputersHomeNetworkNamesAreAnswered(host: String, status: Int) async {
        let (router, _) = router()
        #expect(response(await router.respond(to: request("GET", "/", host: host)))?.status == status)
    }

    @Test func thePhoneAppsMethodsAnswerAndTheComputersAdministrationDoesNot() async throws {
        let calls = WebRouterTests.Calls()
        let (router, sessions) = router(calls: calls)
        let session = sessions.create(phone: .init(name: "p", member: nil, added: 0, address: "a"))
        func post(_ method: String, origin: String = "https://192.168.1.5:47655") async -> Int? {
            response(
                await router.respond(
                    to: request(
                        "POST", "/api/call/\(method)",
                        [
                            ("cookie", "pulse_phone_47655=\(session.cookie)"), ("origin", origin), ("x-pulse-csrf", session.csrf),
                            ("content-type", "application/json"),
                        ], body: "{}")))?.status
        }
        #expect(await post("shop.add") == 200)
        #expect(await post("task.done") == 200)
        for method in ["machine.remove", "member.add", "kids.pin.check", "kids.adjust", "settings.set", "whoami.set", "phones.get"] {
            #expect(await post(method) == 404, "\(method)")
        }
        #expect(await post("shop.add", origin: "http://192.168.1.5:47655") == 403, "an http origin")
        #expect(await post("shop.add", origin: "https://evil.example") == 403)
        #expect(calls.made.withLock { $0.map(\.0) } == ["shop.add", "task.done"])
    }

    @Test func noComputerSignInBackupOrInvitationOnThePhonesSide() async {
        let (router, sessions) = router()
        let session = sessions.create(phone: .init(name: "p", member: nil, added: 0, address: "a"))
        let cookie = ("cookie", "pulse_phone_47655=\(session.cookie)")
        #expect(response(await router.respond(to: request("GET", "/login?token=x")))?.status == 404)
        #expect(response(await router.respond(to: request("GET", "/api/backup", [cookie])))?.status == 404)
        #expect(
            response(
                await router.respond(
                    to: request(
                        "POST", "/api/invite",
                        [cookie, ("origin", "https://192.168.1.5:47655"), ("x-pulse-csrf", session.csrf), ("content-type", "application/json")],
                        body: "{}")))?.status == 404)
        let answer = response(await router.respond(to: request("GET", "/api/session", [cookie])))
        #expect(answer?.status == 200 && String(decoding: answer?.body ?? [], as: UTF8.self).contains(#""phone":true"#))
    }

    @Test func pairingSetsASecureWaitingCookieAndThenTheSession() async throws {
        let (router, sessions) = router()
        let pairing = try #require(router.phones?.pairing)
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
        #expect(pairing.answer(id, approve: true) { _ in sessions.create(phone: .init(name: "p", member: nil, added: 0, address: "a")).cookie })
        let done = try #require(response(await router.respond(to: request("GET", "/pair", [("cookie", "pulse_pairing_47655=\(waiting)")]))))
        let session = try #require(done.headers.first { $0.0 == "Set-Cookie" && $0.1.hasPrefix("pulse_phone_47655=") }?.1)
        #expect(session.contains("Secure") && session.contains("HttpOnly") && session.contains("SameSite=Strict"))
        #expect(sessions.phones().count == 1)
    }
}
