import FoundationEssentials
import PeerSync

/// The phones' side of the page (``WebAudience``): served over TLS on the home network to the
/// household's phones, each signed in by its cookie (a replicated `phone` row: any agent checks
/// it) or, at another agent's address, by its roaming credential as a bearer (CORS); the phone
/// app's methods only; its own page `/pair`.
struct PhoneSite: WebAudience {
    /// The port listened on (the cookies' names).
    var port = 0
    /// The household's home (its message catalogues).
    let home: HouseholdHome
    let hosts: @Sendable () -> Set<String>
    let pairing: PhonePairing
    /// The phone a cookie belongs to (nil: none, or removed).
    let identify: @Sendable (String?) async -> PhoneSession?
    /// The phone a roaming credential belongs to (nil: none, removed, or no longer valid).
    let identifyRoaming: @Sendable (String) async -> PhoneSession?
    /// A phone's roaming credential, for its page (nil: none now).
    let roaming: @Sendable (PhoneSession) async -> String?
    /// Where the household's agents serve phones (`phone.service.list`), for the phone app.
    let agents: @Sendable () async -> JSONValue
    /// Sign-out on a phone: the phone is removed (it must be added again to come back).
    let signOut: @Sendable (PhoneSession) async -> Void
    /// A new session cookie for a phone whose cookie expired (nil: refused).
    var renew: @Sendable (PhoneSession) async -> String? = { _ in nil }
    /// This computer's name, for "waiting for …".
    let computer: String
    /// A phone opened its link and waits: every open page of this computer asks (issue 51).
    var asked: @Sendable (PhonePairing.Request) -> Void = { _ in }
    /// How long a phone's session cookie lasts after its last use, in seconds: renewed at
    /// every start of the app (`/api/session`), so a phone in use stays paired; one unused
    /// for half a year is signed out and told how to be added again (issue 51).
    static let cookieLifetime = 183 * 86_400

    var apiAudience: APIAudience { .phone }
    var cookieName: String { "pulse_phone_\(port)" }
    /// A phone's cookie only ever travels over TLS.
    var cookieAttributes: String { "Path=/; HttpOnly; SameSite=Strict; Secure" }

    func wrongHost(_ request: WebRequest, _ said: MessageCatalogue) -> WebResponse? {
        if let header = request.header("host"), hosts().contains(header.lowercased()) { return nil }
        return WebAnswers.text(421, said.text("web.phone_wrong_host") + "\n")
    }

    func index() async -> WebResponse {
        // The phone app may reach the household's other agents (when its own does not answer),
        // and its own at its other addresses (a new lease: a phone paired by the old one).
        var origins: [String] = []
        if case let .array(agents) = await agents() {
            for case let .object(agent) in agents {
                if case let .array(urls)? = agent["urls"] { origins += urls.compactMap { if case let .string(url) = $0 { url } else { nil } } }
            }
        }
        // The page is told which (its policy's), so it never tries another one.
        let allowed = WebRules.connectable(origins)
        let html = String(decoding: WebAssets.phoneIndexHTML, as: UTF8.self)
            .replacing("<head>\n", with: "<head>\n<meta name=\"pulse-connect\" content=\"\(allowed.joined(separator: " "))\">\n", maxReplacements: 1)
        return WebResponse(
            status: 200,
            headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")]
                + WebRules.securityHeaders(connectingTo: allowed), body: Array(html.utf8))
    }

    func page(_ path: String, query: [String: String], _ request: WebRequest, _ said: MessageCatalogue) -> WebResponse? {
        path == "/pair" ? pair(request, token: query["token"], said) : nil
    }

    func crossing(_ request: WebRequest, path: String) -> WebCrossing {
        // A phone using this agent from another agent's address (its own does not answer): its
        // roaming credential in `Authorization: Bearer`, from that address's page (CORS). Never
        // a cookie: no other site's page can make the phone send it, so no CSRF token either.
        let bearer = WebRules.bearer(request.header("authorization"))
        let origin = request.header("origin").flatMap { $0.lowercased().hasPrefix("https://") ? $0 : nil }
        if bearer != nil || request.method == "OPTIONS" {
            // From an `https://` page, never the address asked (its page has its cookie). Any
            // other: another agent's page, possibly one turned off since (it is why the phone is
            // here), or this agent's at an address or name it no longer answers at (a phone paired
            // by address after a new lease, or whose phone no longer resolves the `.local` name).
            // A bearer is never sent by a browser on its own, so no page can use one it does not
            // hold; answers allow no credentials.
            // The one exception, the other way round: a phone whose cookie expired unused signs
            // in again from its own page with its roaming credential (`/api/session/renew`).
            let asked = request.header("host").map { "https://" + $0.lowercased() }
            let renewal = request.method == "POST" && path == "/api/session/renew" && bearer != nil
            guard let origin, renewal == (origin.lowercased() == asked) else { return .answered(.response(WebAnswers.refused(403, .wrongOrigin))) }
        }
        if request.method == "OPTIONS" {
            guard let origin, request.header("access-control-request-method") != nil else {
                return .answered(
                    .response(WebAnswers.refused(405, .methodNotAllowed, ["allowed": ["GET", "POST"]], extra: [("Allow", "GET, POST")])))
            }
            return .answered(
                .response(
                    WebResponse(
                        status: 204,
                        headers: [
                            ("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Methods", "GET, POST"),
                            ("Access-Control-Allow-Headers", "authorization, content-type, last-event-id"), ("Access-Control-Max-Age", "600"),
                            ("Vary", "Origin"), ("Cache-Control", "no-store"),
                        ] + WebRules.securityHeaders, body: [])))
        }
        let cors: [(String, String)] = if bearer != nil, let origin { [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")] } else { [] }
        return .onward(bearer: bearer, cors: cors)
    }

    func caller(cookie: String?, bearer: String?) async -> WebCaller? {
        // A phone's session is the household's (any agent checks it).
        let phone = if let bearer { await identifyRoaming(bearer) } else { await identify(cookie) }
        return phone.map { WebCaller(api: .phone(member: $0.member), csrf: $0.csrf, phone: $0) }
    }

    func sameOrigin(_ request: WebRequest) -> Bool {
        request.header("origin").map { hosts().map { "https://" + $0 }.contains($0.lowercased()) } ?? false
    }

    func route(_ request: WebRequest, path: String, caller: WebCaller, bearer: String?) async -> WebReply? {
        guard request.method == "POST", path == "/api/session/renew", bearer != nil else { return nil }
        // A phone whose cookie expired unused (half a year), still in the household: a new
        // cookie for its roaming credential, asked from its own page with one tap (issue 51).
        guard let phone = caller.phone, let renewed = await renew(phone) else { return .response(WebAnswers.refused(401, .notSignedIn)) }
        return .response(
            WebAnswers.json(
                200, ["renewed": .bool(true)], extra: [("Set-Cookie", "\(cookieName)=\(renewed); \(cookieAttributes); Max-Age=\(Self.cookieLifetime)")]))
    }

    func session(_ session: inout [String: JSONValue], caller: WebCaller, cookie: String?, bearer: String?) async -> [(String, String)] {
        guard let phone = caller.phone else { return [] }
        session["phone"] = .bool(true) // the phone app: no computer administration
        session["home"] = nil // nor where this computer keeps the household
        // For using the household's other agents when this one does not answer.
        session["roaming"] = await roaming(phone).map(JSONValue.string) ?? .null
        session["agents"] = await agents()
        session["computer"] = .string(computer)
        // Renewed with use: a phone the family uses stays paired (issue 51).
        guard bearer == nil, let cookie else { return [] }
        return [("Set-Cookie", "\(cookieName)=\(cookie); \(cookieAttributes); Max-Age=\(Self.cookieLifetime)")]
    }

    /// A phone's header needs only whether the computers are connected and in sync: no
    /// machine ids, addresses or words about them (issue 51).
    func status(_ body: Data) -> WebResponse { WebAnswers.json(200, Self.phoneStatus(body)) }

    /// What a phone is told of the agent's status (`body`, its JSON): per peer, whether it is
    /// connected, in sync, and has a problem — nothing that names or locates a machine.
    static func phoneStatus(_ body: Data) -> [String: JSONValue] {
        guard case let .object(status)? = try? JSONDecoder().decode(JSONValue.self, from: body), case let .array(peers)? = status["peers"]
        else { return ["peers": .array([])] }
        return [
            "peers": .array(
                peers.map { peer in
                    guard case let .object(fields) = peer else { return .object([:]) }
                    let problem: Bool = if case .string? = fields["problem"] { true } else { false }
                    return .object(["state": fields["state"] ?? .null, "inSync": fields["inSync"] ?? .null, "problem": problem ? .bool(true) : .null])
                })
        ]
    }

    func events(resume: String?, caller: WebCaller, _ request: WebRequest, cors: [(String, String)]) -> WebReply {
        // A phone's notifications, in its browser's language (decided by the agent: MemberNotices).
        let language = Languages.forAcceptLanguage(request.header("accept-language"), available: MessageCatalogue.languages(home: home))
        let words = (try? MessageCatalogue.load(language, home: home)) ?? .english
        return .phoneEvents(resume: resume, notices: MemberNotices(member: caller.phone?.member, words: words), headers: cors)
    }

    func signOut(_ caller: WebCaller, cookie: String?) async {
        if let phone = caller.phone { await signOut(phone) }
    }

    // MARK: Adding a phone

    var pairingCookie: String { "pulse_pairing_\(port)" }

    /// `GET /pair?token=…` (the QR code's link, over TLS only): the token, once, makes a
    /// request the computer answers; the phone waits here (a refresh every 2 s) with its
    /// waiting cookie, and gets its session cookie once the computer said yes.
    private func pair(_ request: WebRequest, token: String?, _ said: MessageCatalogue) -> WebResponse {
        let attributes = "Path=/; HttpOnly; Secure; SameSite=Strict"
        func waiting(_ asked: PhonePairing.Request, cookie: String?) -> WebResponse {
            var response = WebAnswers.page(
                200, title: said.text("phone.pair.waiting.title"), language: said.language,
                body: "<p>"
                    + (said.text("phone.pair.waiting.body", ["computer": .string(computer), "name": .string(asked.name)])).markupEscaped
                    + "</p><p>" + (said.text("phone.pair.waiting.code", ["code": .string(asked.code)])).markupEscaped
                    + "</p><p class=\"pair-code\" id=\"pair-code\">" + (asked.code).markupEscaped + "</p>",
                head: "<meta http-equiv=\"refresh\" content=\"2;url=/pair\">")
            if let cookie { response.headers.append(("Set-Cookie", "\(pairingCookie)=\(cookie); \(attributes); Max-Age=\(PhonePairing.lifetime / 1000)")) }
            return response
        }
        let refusedPage = WebAnswers.page(
            401, title: said.text("phone.pair.refused.title"), language: said.language,
            body: "<p>" + (said.text("phone.pair.refused.body")).markupEscaped + "</p>")
        if let token {
            guard let (asked, cookie) = pairing.redeem(token, address: request.remote) else { return refusedPage }
            self.asked(asked)
            return waiting(asked, cookie: cookie)
        }
        guard let asked = pairing.collect(WebRules.cookie(pairingCookie, in: request.headers("cookie"))) else { return refusedPage }
        switch asked.answer {
        case .pending: return waiting(asked, cookie: nil)
        case .declined:
            var response = refusedPage
            response.headers.append(("Set-Cookie", "\(pairingCookie)=; \(attributes); Max-Age=0"))
            return response
        case let .approved(cookie):
            var response = WebAnswers.page(
                200, title: said.text("web.opening.title"), language: said.language,
                body: "<p><a href=\"/\">\((said.text("web.opening.link")).markupEscaped)</a></p>",
                head: "<meta http-equiv=\"refresh\" content=\"0;url=/\">")
            response.headers.append(("Set-Cookie", "\(pairingCookie)=; \(attributes); Max-Age=0"))
            response.headers.append(("Set-Cookie", "\(cookieName)=\(cookie); \(cookieAttributes); Max-Age=\(Self.cookieLifetime)"))
            return response
        }
    }
}
