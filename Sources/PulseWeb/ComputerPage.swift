import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PeerSync

/// The computer's own page (``WebAudience``): served on loopback to this computer's person,
/// signed in by a link from the control socket (`/login`), its sessions this agent's own; it
/// may call every method but the agent's plumbing, download a backup and open an invitation
/// for another computer.
struct ComputerPage: WebAudience {
    let api: LocalAPI
    let sessions: WebSessions
    /// The address bound, and the port actually listened on.
    let host: String
    let port: Int
    /// The user whose program holds the client's end of a loopback connection (the kernel's
    /// socket tables); a sign-in link is redeemed only for this agent's own user (or root).
    var clientOwner: @Sendable (WebRequest) -> UInt32? = { request in
        guard let client = request.client, let server = request.server else { return nil }
        return SocketOwner.uid(client: client, server: server)
    }

    var apiAudience: APIAudience { .page }
    var cookieName: String { "pulse_session_\(port)" }
    var cookieAttributes: String { "Path=/; HttpOnly; SameSite=Strict" }

    func wrongHost(_ request: WebRequest, _ said: MessageCatalogue) -> WebResponse? {
        if WebRules.hostAllowed(request.header("host"), host: host, port: port) { return nil }
        return WebAnswers.text(421, said.text("web.wrong_host", ["url": .string("http://127.0.0.1:\(port)")]) + "\n")
    }

    func index() async -> WebResponse { WebAnswers.asset(WebAssets.indexHTML, "text/html; charset=utf-8") }

    func page(_ path: String, query: [String: String], _ request: WebRequest, _ said: MessageCatalogue) -> WebResponse? {
        guard path == "/login" else { return nil }
        // Another account's browser (it saw the link on a command line?): refused, the link
        // kept for its owner's. (Root's is let in: root can read the owner's files anyway.)
        guard let owner = clientOwner(request), owner == getuid() || owner == 0 else { return loginExpired(said) }
        return login(query["token"], tab: query["tab"], said)
    }

    func crossing(_ request: WebRequest, path: String) -> WebCrossing { .onward(bearer: nil, cors: []) }

    func caller(cookie: String?, bearer: String?) async -> WebCaller? {
        sessions.csrf(for: cookie).map { WebCaller(api: .page, csrf: $0) }
    }

    func sameOrigin(_ request: WebRequest) -> Bool { WebRules.originAllowed(request.header("origin"), host: host, port: port) }

    func route(_ request: WebRequest, path: String, caller: WebCaller, bearer: String?) async -> WebReply? {
        switch (request.method, path) {
        case ("GET", "/api/backup"):
            // A consistent snapshot, as `pulse-peer backup` makes (it holds the household's
            // secrets: a signed-in page of this computer only, never cached).
            do {
                let bytes = try await api.backup()
                let name = "house-pulse-backup-\(Days.today()).sqlite"
                return .response(
                    WebResponse(
                        status: 200,
                        headers: WebAnswers.apiHeaders("application/vnd.sqlite3")
                            + [("Content-Disposition", "attachment; filename=\"\(name)\"")], body: bytes))
            } catch {
                return .response(WebAnswers.json(500, ["error": Refusal(error).body.json]))
            }
        case ("POST", "/api/invite"): return .response(await invite(request))
        default: return nil
        }
    }

    func session(_ session: inout [String: JSONValue], caller: WebCaller, cookie: String?, bearer: String?) async -> [(String, String)] { [] }

    func status(_ body: Data) -> WebResponse { WebResponse(status: 200, headers: WebAnswers.apiHeaders("application/json"), body: Array(body)) }

    func events(resume: String?, caller: WebCaller, _ request: WebRequest, cors: [(String, String)]) -> WebReply { .events(resume: resume) }

    func signOut(_ caller: WebCaller, cookie: String?) async { sessions.end(cookie) }

    // MARK: The login

    private func loginExpired(_ said: MessageCatalogue) -> WebResponse {
        let hint = (said.text("web.login_expired.hint", ["command": "pulse-peer open"])).markupEscaped
            .replacing("pulse-peer open", with: "<code>pulse-peer open</code>")
        return WebAnswers.page(
            401, title: said.text("web.login_expired.title"), language: said.language,
            body: "<p>\((said.text("web.login_expired.body")).markupEscaped)</p><p>\(hint)</p>")
    }

    /// The page's tabs a sign-in link may lead to (`/login?…&tab=`): its `<section id="tab-…">`s,
    /// read from the page itself (the one list of them; a notification's tab is one: WebTests).
    static let tabs: Set<String> = Set(
        String(decoding: WebAssets.indexHTML, as: UTF8.self).split(separator: #"<section id="tab-"#).dropFirst()
            .compactMap { $0.split(separator: "\"", maxSplits: 1).first.map(String.init) })

    /// `GET /login?token=…[&tab=…]` (the link `pulse-peer open` makes, or a click on a
    /// notification): a valid token, once, sets the session cookie; the page then goes to `/`
    /// (on the tab, when one of ``tabs``) by a meta refresh (a navigation of this origin, so the
    /// SameSite=Strict cookie is sent with it).
    private func login(_ token: String?, tab: String?, _ said: MessageCatalogue) -> WebResponse {
        guard let token, api.redeemLogin(token) else { return loginExpired(said) }
        let session = sessions.create()
        let target = tab.map { Self.tabs.contains($0) ? "/#\($0)" : "/" } ?? "/"
        var response = WebAnswers.page(
            200, title: said.text("web.opening.title"), language: said.language,
            body: "<p><a href=\"\(target)\">\((said.text("web.opening.link")).markupEscaped)</a></p>",
            head: "<meta http-equiv=\"refresh\" content=\"0;url=\(target)\">")
        response.headers.append(
            ("Set-Cookie", "\(cookieName)=\(session.cookie); \(cookieAttributes); Max-Age=\(WebSessions.idleLifetime / 1000)"))
        return response
    }

    // MARK: "Add a computer"

    /// A pairing code, as `pulse-peer invite` prints it, with where the other computer reaches
    /// this one when mDNS does not find it.
    private func invite(_ request: WebRequest) async -> WebResponse {
        guard request.header("content-type")?.lowercased().hasPrefix("application/json") == true else {
            return WebAnswers.refused(415, .notJSON)
        }
        guard case let .object(params)? = try? JSONDecoder().decode(JSONValue.self, from: Data(request.body.isEmpty ? Array("{}".utf8) : request.body))
        else {
            return WebAnswers.refused(400, .notJSON)
        }
        var member: String?
        switch params["member"] {
        case nil, .null?: member = nil
        case let .string(name)?: member = name
        default: return WebAnswers.refused(422, .wrongType, ["key": "member", "type": "string"])
        }
        var minutes = Invitation.defaultMinutes
        if let value = params["minutes"] {
            guard let number = value.integerValue, Invitation.minutes.contains(Int(number)) else {
                return WebAnswers.refused(
                    422, .inviteMinutes, ["min": JSONValue(Invitation.minutes.lowerBound), "max": JSONValue(Invitation.minutes.upperBound)])
            }
            minutes = Int(number)
        }
        let answer = await api.invite(member: member, minutes: minutes)
        if answer.ok, case var .object(result)? = answer.result {
            // Where the other computer reaches this one when mDNS does not find it (the
            // welcome's "If the other computer is not found"): this computer's LAN
            // addresses, then its `.local` name, with the agent's sync port.
            if let port = try? await api.status().machine.port {
                let here = PhoneTLS.thisMachine()
                result["addresses"] = .array((here.addresses + here.names).map { .string("\($0):\(port)") })
            }
            return WebAnswers.json(200, ["result": .object(result)])
        }
        return WebAnswers.json(422, ["error": (answer.error ?? Refusal(.failed, ["detail": "refused"]).body).json])
    }
}

extension WebRouter where Audience == ComputerPage {
    /// The computer's page on `host`:`port`.
    init(api: LocalAPI, sessions: WebSessions, host: String, port: Int) {
        self.init(api: api, audience: ComputerPage(api: api, sessions: sessions, host: host, port: port))
    }
}
