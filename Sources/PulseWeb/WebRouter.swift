import Crypto
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PeerSync

/// One HTTP request, as the router sees it (no NIO types: tested without sockets).
struct WebRequest: Sendable {
    var method: String
    var uri: String
    /// Names in lower case.
    var headers: [(name: String, value: String)]
    var body: [UInt8] = []
    /// The client's address (what the computer's page shows of a phone asking to be added).
    var remote: String = ""
    /// The connection's two ends (address, port), as this computer sees them: whose browser it
    /// is (``WebRouter/clientOwner``).
    var client: (address: String, port: Int)? = nil
    var server: (address: String, port: Int)? = nil

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    func headers(_ name: String) -> [String] { headers.filter { $0.name == name }.map(\.value) }
}

struct WebResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
}

enum WebReply: Sendable {
    case response(WebResponse)
    /// Server-Sent Events from the live feed, resuming after a token (or from now).
    case events(resume: String?)
    /// The same for a phone, with its notifications (`event: notice`) by the desktop's rules;
    /// `headers`: the cross-origin ones of a phone using this agent from another's address.
    case phoneEvents(resume: String?, notices: MemberNotices, headers: [(String, String)])
}

/// Decides every answer of the page (docs/API.md, "The web page"): the Host check first,
/// then the page's files, the login, and the JSON API behind the session cookie, the
/// `Origin` check and the CSRF token.
struct WebRouter: Sendable {
    let api: LocalAPI
    let sessions: WebSessions
    /// The address bound, and the port actually listened on.
    let host: String
    let port: Int
    /// The phones' LAN listener (HTTPS), or nil: this computer's loopback page.
    var phones: PhoneSite? = nil
    /// The user whose program holds the client's end of a loopback connection (the kernel's
    /// socket tables); a sign-in link is redeemed only for this agent's own user (or root).
    var clientOwner: @Sendable (WebRequest) -> UInt32? = { request in
        guard let client = request.client, let server = request.server else { return nil }
        return SocketOwner.uid(client: client, server: server)
    }

    /// Per port: two households' pages on one machine keep their own sessions.
    var cookieName: String { phones == nil ? "pulse_session_\(port)" : "pulse_phone_\(port)" }
    /// The session cookie's attributes: a phone's only ever travels over TLS.
    var cookieAttributes: String { "Path=/; HttpOnly; SameSite=Strict" + (phones == nil ? "" : "; Secure") }
    static let csrfHeader = "x-pulse-csrf"
    static let maxBody = 64 * 1024

    func respond(to request: WebRequest) async -> WebReply {
        let said = words(Languages.forAcceptLanguage(request.header("accept-language"), available: MessageCatalogue.languages(home: api.home)))
        if let phones {
            guard let header = request.header("host"), phones.hosts().contains(header.lowercased()) else {
                return .response(text(421, said.text("web.phone_wrong_host") + "\n"))
            }
        } else {
            guard WebRules.hostAllowed(request.header("host"), host: host, port: port) else {
                return .response(text(421, said.text("web.wrong_host", ["url": .string("http://127.0.0.1:\(port)")]) + "\n"))
            }
        }
        let (path, query) = WebRules.split(uri: request.uri)
        if path.hasPrefix("/api/") { return await apiCall(request, path: path, query: query) }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .response(text(405, said.text("web.method_not_allowed") + "\n", extra: [("Allow", "GET")]))
        }
        switch path {
        case "/", "/index.html":
            guard let phones else { return .response(asset(WebAssets.indexHTML, "text/html; charset=utf-8")) }
            // The phone app may reach the household's other agents (when its own does not answer),
            // and its own at its other addresses (a new lease: a phone paired by the old one).
            var origins: [String] = []
            if case let .array(agents) = await phones.agents() {
                for case let .object(agent) in agents {
                    if case let .array(urls)? = agent["urls"] { origins += urls.compactMap { if case let .string(url) = $0 { url } else { nil } } }
                }
            }
            // The page is told which (its policy's), so it never tries another one.
            let allowed = WebRules.connectable(origins)
            let html = String(decoding: WebAssets.indexHTML, as: UTF8.self)
                .replacing("<head>\n", with: "<head>\n<meta name=\"pulse-connect\" content=\"\(allowed.joined(separator: " "))\">\n", maxReplacements: 1)
            return .response(
                WebResponse(
                    status: 200,
                    headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")]
                        + WebRules.securityHeaders(connectingTo: allowed), body: Array(html.utf8)))
        case "/app.css": return .response(asset(WebAssets.appCSS, "text/css; charset=utf-8"))
        case "/icon.svg": return .response(asset(WebAssets.iconSVG, "image/svg+xml"))
        case "/icon-192.png": return .response(asset(PackageResources.icon_192_png, "image/png"))
        case "/icon-512.png": return .response(asset(PackageResources.icon_512_png, "image/png"))
        case "/manifest.webmanifest": return .response(asset(PackageResources.manifest_webmanifest, "application/manifest+json"))
        // The phone app's service worker (offline), a module worker for the root scope.
        case "/sw.js": return .response(asset(WebAssets.serviceWorker, "text/javascript; charset=utf-8"))
        case "/login" where phones == nil:
            // Another account's browser (it saw the link on a command line?): refused, the link
            // kept for its owner's. (Root's is let in: root can read the owner's files anyway.)
            guard let owner = clientOwner(request), owner == getuid() || owner == 0 else { return .response(loginExpired(said)) }
            return .response(login(query["token"], tab: query["tab"], said))
        case "/pair" where phones != nil: return .response(pair(request, token: query["token"], phones: phones!, said))
        default:
            if let module = WebAssets.modules[path] { return .response(asset(module, "text/javascript; charset=utf-8")) }
            // The message catalogue the page renders its sentences from (the agent's own).
            // A home's own file over the built-in one; English where the language is unknown.
            if path.hasPrefix("/messages/"), path.hasSuffix(".json") {
                let language = String(path.dropFirst("/messages/".count).dropLast(".json".count))
                guard MessageCatalogue.languages(home: api.home).contains(language) else {
                    return .response(text(404, said.text("web.not_found") + "\n"))
                }
                return .response(asset(words(language).json, "application/json; charset=utf-8"))
            }
            return .response(text(404, said.text("web.not_found") + "\n"))
        }
    }

    /// The words of `language` for this household (English when its home file is broken).
    func words(_ language: String) -> MessageCatalogue {
        (try? MessageCatalogue.load(language, home: api.home)) ?? .english
    }

    // MARK: The login

    private func loginExpired(_ said: MessageCatalogue) -> WebResponse {
        let hint = (said.text("web.login_expired.hint", ["command": "pulse-peer open"])).markupEscaped
            .replacing("pulse-peer open", with: "<code>pulse-peer open</code>")
        return page(
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
        var response = page(
            200, title: said.text("web.opening.title"), language: said.language,
            body: "<p><a href=\"\(target)\">\((said.text("web.opening.link")).markupEscaped)</a></p>",
            head: "<meta http-equiv=\"refresh\" content=\"0;url=\(target)\">")
        response.headers.append(
            ("Set-Cookie", "\(cookieName)=\(session.cookie); \(cookieAttributes); Max-Age=\(WebSessions.idleLifetime / 1000)"))
        return response
    }

    // MARK: Adding a phone

    var pairingCookie: String { "pulse_pairing_\(port)" }

    /// `GET /pair?token=…` (the QR code's link, over TLS only): the token, once, makes a
    /// request the computer answers; the phone waits here (a refresh every 2 s) with its
    /// waiting cookie, and gets its session cookie once the computer said yes.
    private func pair(_ request: WebRequest, token: String?, phones: PhoneSite, _ said: MessageCatalogue) -> WebResponse {
        let attributes = "Path=/; HttpOnly; Secure; SameSite=Strict"
        func waiting(_ asked: PhonePairing.Request, cookie: String?) -> WebResponse {
            var response = page(
                200, title: said.text("phone.pair.waiting.title"), language: said.language,
                body: "<p>"
                    + (said.text("phone.pair.waiting.body", ["computer": .string(phones.computer), "name": .string(asked.name)])).markupEscaped
                    + "</p><p>" + (said.text("phone.pair.waiting.code", ["code": .string(asked.code)])).markupEscaped
                    + "</p><p class=\"pair-code\" id=\"pair-code\">" + (asked.code).markupEscaped + "</p>",
                head: "<meta http-equiv=\"refresh\" content=\"2;url=/pair\">")
            if let cookie { response.headers.append(("Set-Cookie", "\(pairingCookie)=\(cookie); \(attributes); Max-Age=\(PhonePairing.lifetime / 1000)")) }
            return response
        }
        let refusedPage = page(
            401, title: said.text("phone.pair.refused.title"), language: said.language,
            body: "<p>" + (said.text("phone.pair.refused.body")).markupEscaped + "</p>")
        if let token {
            guard let (asked, cookie) = phones.pairing.redeem(token, address: request.remote) else { return refusedPage }
            phones.asked(asked)
            return waiting(asked, cookie: cookie)
        }
        guard let asked = phones.pairing.collect(WebRules.cookie(pairingCookie, in: request.headers("cookie"))) else { return refusedPage }
        switch asked.answer {
        case .pending: return waiting(asked, cookie: nil)
        case .declined:
            var response = refusedPage
            response.headers.append(("Set-Cookie", "\(pairingCookie)=; \(attributes); Max-Age=0"))
            return response
        case let .approved(cookie):
            var response = page(
                200, title: said.text("web.opening.title"), language: said.language,
                body: "<p><a href=\"/\">\((said.text("web.opening.link")).markupEscaped)</a></p>",
                head: "<meta http-equiv=\"refresh\" content=\"0;url=/\">")
            response.headers.append(("Set-Cookie", "\(pairingCookie)=; \(attributes); Max-Age=0"))
            response.headers.append(("Set-Cookie", "\(cookieName)=\(cookie); \(cookieAttributes); Max-Age=\(PhoneSite.cookieLifetime)"))
            return response
        }
    }

    // MARK: The JSON API

    private func apiCall(_ request: WebRequest, path: String, query: [String: String]) async -> WebReply {
        // A phone using this agent from another agent's address (its own does not answer): its
        // roaming credential in `Authorization: Bearer`, from that address's page (CORS). Never
        // a cookie: no other site's page can make the phone send it, so no CSRF token either.
        let bearer = phones == nil ? nil : WebRules.bearer(request.header("authorization"))
        let origin = request.header("origin").flatMap { $0.lowercased().hasPrefix("https://") ? $0 : nil }
        if phones != nil, bearer != nil || request.method == "OPTIONS" {
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
            guard let origin, renewal == (origin.lowercased() == asked) else { return .response(refused(403, .wrongOrigin)) }
        }
        if phones != nil, request.method == "OPTIONS" {
            guard let origin, request.header("access-control-request-method") != nil else {
                return .response(refused(405, .methodNotAllowed, ["allowed": ["GET", "POST"]], extra: [("Allow", "GET, POST")]))
            }
            return .response(
                WebResponse(
                    status: 204,
                    headers: [
                        ("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Methods", "GET, POST"),
                        ("Access-Control-Allow-Headers", "authorization, content-type, last-event-id"), ("Access-Control-Max-Age", "600"),
                        ("Vary", "Origin"), ("Cache-Control", "no-store"),
                    ] + WebRules.securityHeaders, body: []))
        }
        let cors: [(String, String)] = bearer != nil && origin != nil ? [("Access-Control-Allow-Origin", origin!), ("Vary", "Origin")] : []
        let reply = await apiAnswer(request, path: path, query: query, bearer: bearer, cors: cors)
        guard !cors.isEmpty, case var .response(response) = reply else { return reply }
        response.headers += cors
        return .response(response)
    }

    private func apiAnswer(
        _ request: WebRequest, path: String, query: [String: String], bearer: String?, cors: [(String, String)]
    ) async -> WebReply {
        let cookie = WebRules.cookie(cookieName, in: request.headers("cookie"))
        // A phone's session is the household's (any agent checks it); the computer's page's
        // are this agent's own.
        let phone = if let bearer { await phones?.identifyRoaming(bearer) } else { await phones?.identify(cookie) }
        guard let csrf = phones == nil ? sessions.csrf(for: cookie) : phone?.csrf else {
            return .response(refused(401, .notSignedIn))
        }
        if request.method == "POST", bearer == nil {
            let sameOrigin =
                if let phones {
                    request.header("origin").map { phones.hosts().map { "https://" + $0 }.contains($0.lowercased()) } ?? false
                } else {
                    WebRules.originAllowed(request.header("origin"), host: host, port: port)
                }
            guard sameOrigin else {
                return .response(refused(403, .wrongOrigin))
            }
            guard let sent = request.header(Self.csrfHeader), WebSessions.same(sent, csrf) else {
                return .response(refused(403, .missingToken))
            }
        } else if request.method != "GET", request.method != "POST" {
            return .response(refused(405, .methodNotAllowed, ["allowed": ["GET", "POST"]], extra: [("Allow", "GET, POST")]))
        }
        switch (request.method, path) {
        case ("POST", "/api/session/renew") where bearer != nil:
            // A phone whose cookie expired unused (half a year), still in the household: a new
            // cookie for its roaming credential, asked from its own page with one tap (issue 51).
            guard let phones, let phone, let renewed = await phones.renew(phone) else { return .response(refused(401, .notSignedIn)) }
            return .response(
                json(
                    200, ["renewed": .bool(true)], extra: [("Set-Cookie", "\(cookieName)=\(renewed); \(cookieAttributes); Max-Age=\(PhoneSite.cookieLifetime)")]
                ))
        case ("GET", "/api/session"):
            // The page's language: this computer's choice, else its member's, else the browser's.
            let choice = await api.languageChoice()
            let available = choice?.available ?? Languages.builtIn
            let language = choice?.chosen ?? Languages.forAcceptLanguage(request.header("accept-language"), available: available)
            var languages: [String: JSONValue] = ["available": JSONValue(available)]
            languages["machine"] = choice?.machine.map { .string($0) } ?? .null
            languages["member"] = choice?.member.map { .string($0) } ?? .null
            languages["memberName"] = choice?.memberName.map { .string($0) } ?? .null
            var session: [String: JSONValue] = [
                "csrf": .string(csrf), "home": .string(api.home.path), "language": .string(language), "languages": .object(languages),
            ]
            if api.welcome { session["welcome"] = .bool(true) } // no household yet: the page's welcome
            if let phones, let phone {
                session["phone"] = .bool(true) // the phone app: no computer administration
                session["home"] = nil // nor where this computer keeps the household
                // For using the household's other agents when this one does not answer.
                session["roaming"] = await phones.roaming(phone).map(JSONValue.string) ?? .null
                session["agents"] = await phones.agents()
                session["computer"] = .string(phones.computer)
                if bearer == nil, let cookie {
                    // Renewed with use: a phone the family uses stays paired (issue 51).
                    return .response(
                        json(200, session, extra: [("Set-Cookie", "\(cookieName)=\(cookie); \(cookieAttributes); Max-Age=\(PhoneSite.cookieLifetime)")]))
                }
            }
            return .response(json(200, session))
        case ("GET", "/api/status"):
            do {
                let status = try await api.status()
                let body = try JSONEncoder().encode(status)
                // A phone's header needs only whether the computers are connected and in
                // sync: no machine ids, addresses or words about them (issue 51).
                if phone != nil { return .response(json(200, Self.phoneStatus(body))) }
                return .response(WebResponse(status: 200, headers: apiHeaders("application/json"), body: Array(body)))
            } catch {
                return .response(json(500, ["error": Refusal(error).body.json]))
            }
        case ("GET", "/api/backup") where phones == nil:
            // A consistent snapshot, as `pulse-peer backup` makes (it holds the household's
            // secrets: a signed-in page of this computer only, never cached).
            do {
                let bytes = try await api.backup()
                let name = "house-pulse-backup-\(Days.today()).sqlite"
                return .response(
                    WebResponse(
                        status: 200,
                        headers: apiHeaders("application/vnd.sqlite3")
                            + [("Content-Disposition", "attachment; filename=\"\(name)\"")], body: bytes))
            } catch {
                return .response(json(500, ["error": Refusal(error).body.json]))
            }
        case ("GET", "/api/events"):
            let resume = request.header("last-event-id") ?? query["resume"]
            if let phone {
                // A phone's notifications, in its browser's language (decided by the agent: MemberNotices).
                let language = Languages.forAcceptLanguage(request.header("accept-language"), available: MessageCatalogue.languages(home: api.home))
                return .phoneEvents(
                    resume: resume?.isEmpty == true ? nil : resume, notices: MemberNotices(member: phone.member, words: words(language)),
                    headers: cors)
            }
            return .events(resume: resume?.isEmpty == true ? nil : resume)
        case ("POST", "/api/logout"):
            if let phone, let phones { await phones.signOut(phone) } else { sessions.end(cookie) }
            var response = json(200, ["ok": .bool(true)])
            response.headers.append(("Set-Cookie", "\(cookieName)=; \(cookieAttributes); Max-Age=0"))
            return .response(response)
        case ("POST", "/api/invite") where phones == nil:
            // "Add a computer": a pairing code, as `pulse-peer invite` prints it.
            guard request.header("content-type")?.lowercased().hasPrefix("application/json") == true else {
                return .response(refused(415, .notJSON))
            }
            guard case let .object(params)? = try? JSONDecoder().decode(JSONValue.self, from: Data(request.body.isEmpty ? Array("{}".utf8) : request.body))
            else {
                return .response(refused(400, .notJSON))
            }
            var member: String?
            switch params["member"] {
            case nil, .null?: member = nil
            case let .string(name)?: member = name
            default: return .response(refused(422, .wrongType, ["key": "member", "type": "string"]))
            }
            var minutes = Invitation.defaultMinutes
            if let value = params["minutes"] {
                guard let number = value.integerValue, Invitation.minutes.contains(Int(number)) else {
                    return .response(
                        refused(422, .inviteMinutes, ["min": JSONValue(Invitation.minutes.lowerBound), "max": JSONValue(Invitation.minutes.upperBound)]))
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
                return .response(json(200, ["result": .object(result)]))
            }
            return .response(json(422, ["error": (answer.error ?? Refusal(.failed, ["detail": "refused"]).body).json]))
        case ("POST", _) where path.hasPrefix("/api/call/"):
            let method = String(path.dropFirst("/api/call/".count))
            guard api.knows(method, for: phones == nil ? .page : .phone) else {
                return .response(refused(404, .unknownMethod, ["method": .string(method)]))
            }
            guard request.header("content-type")?.lowercased().hasPrefix("application/json") == true else {
                return .response(refused(415, .notJSON))
            }
            let params: [String: JSONValue]
            if request.body.isEmpty {
                params = [:]
            } else {
                guard case let .object(object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(request.body)) else {
                    return .response(refused(400, .notJSON))
                }
                params = object
            }
            let answer = await api.call(method, params, as: phone.map { .phone(member: $0.member) } ?? .page)
            if answer.ok { return .response(json(200, ["result": answer.result ?? .null])) }
            return .response(json(422, ["error": (answer.error ?? Refusal(.failed, ["detail": "refused"]).body).json]))
        default:
            return .response(refused(404, .noSuchPath, ["path": .string(path)]))
        }
    }

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

    // MARK: Responses

    private func apiHeaders(_ type: String) -> [(String, String)] {
        [("Content-Type", type), ("Cache-Control", "no-store")] + WebRules.securityHeaders
    }

    private func json(_ status: Int, _ object: [String: JSONValue], extra: [(String, String)] = []) -> WebResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let body = (try? encoder.encode(JSONValue.object(object))).map(Array.init) ?? Array("{}".utf8)
        return WebResponse(status: status, headers: apiHeaders("application/json") + extra, body: body)
    }

    /// A refusal of the page's API: `{"error": {"code", "params", "message"}}`.
    private func refused(
        _ status: Int, _ code: Refusal.Code, _ params: [String: JSONValue] = [:],
        extra: [(String, String)] = []
    ) -> WebResponse {
        json(status, ["error": Refusal(code, params).body.json], extra: extra)
    }

    private func text(_ status: Int, _ message: String, extra: [(String, String)] = []) -> WebResponse {
        WebResponse(status: status, headers: apiHeaders("text/plain; charset=utf-8") + extra, body: Array(message.utf8))
    }

    private func asset(_ bytes: [UInt8], _ type: String) -> WebResponse {
        // Revalidated each time: a new agent's page is used at once after an upgrade.
        WebResponse(
            status: 200, headers: [("Content-Type", type), ("Cache-Control", "no-cache")] + WebRules.securityHeaders,
            body: bytes)
    }

    private func page(_ status: Int, title: String, language: String, body: String, head: String = "") -> WebResponse {
        Self.page(status, title: title, language: language, body: body, head: head)
    }

    /// A page of words (a login, a pairing, the CA's download), with the page's style.
    static func page(_ status: Int, title: String, language: String, body: String, head: String = "") -> WebResponse {
        let title = (title).markupEscaped
        let html = """
            <!doctype html><html lang="\(language)"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            \(head)<title>\(title)</title><link rel="stylesheet" href="/app.css"></head>
            <body class="notice"><main><h1>\(title)</h1>\(body)</main></body></html>
            """
        return WebResponse(
            status: status, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")] + WebRules.securityHeaders,
            body: Array(html.utf8))
    }
}

/// The page's files, embedded in the binary (nothing is loaded from elsewhere).
enum WebAssets {
    /// The page as served: `index.html` with a `modulepreload` link for every module `main.js`
    /// imports statically, directly or through another (``staticImports(of:)``), so that the
    /// browser asks for them all at once instead of level by level as it reads each one. The
    /// parts only the computer's page imports, on demand (`import("./parents.js")`), are not
    /// among them. Derived from the files: no list to keep (a hand-kept one had missed the
    /// two newest modules: issue 54).
    static let indexHTML: [UInt8] = {
        let script = "<script type=\"module\" src=\"/main.js\"></script>\n"
        let links = staticImports(of: "/main.js").sorted().map { "<link rel=\"modulepreload\" href=\"\($0)\">\n" }.joined()
        let text = String(decoding: PackageResources.index_html, as: UTF8.self)
        precondition(text.contains(script), "index.html loads /main.js as a module")
        return Array(text.replacing(script, with: script + links, maxReplacements: 1).utf8)
    }()

    /// The modules `path` imports statically (`import … from "./x.js"`, `import "./x.js"`, one
    /// a line, as the page writes them), and the modules those import, by path; itself left out.
    static func staticImports(of path: String) -> Set<String> {
        var found: Set<String> = [], waiting = [path]
        while let next = waiting.popLast() {
            guard let source = modules[next] else { continue }
            for line in String(decoding: source, as: UTF8.self).split(separator: "\n") where line.hasPrefix("import ") {
                guard let specifier = line.matches(of: /"\.\/([A-Za-z0-9_-]+\.js)"/).last else { continue }
                let imported = "/" + specifier.output.1
                if found.insert(imported).inserted { waiting.append(imported) }
            }
        }
        found.remove(path)
        return found
    }
    /// The page's ES modules by path (no build step: served as written).
    static let modules: [String: [UInt8]] = [
        "/main.js": PackageResources.main_js,
        "/api.js": PackageResources.api_js,
        "/messages.js": PackageResources.messages_js,
        "/store.js": PackageResources.store_js,
        "/page.js": PackageResources.page_js,
        "/feed.js": PackageResources.feed_js,
        "/ui.js": PackageResources.ui_js,
        "/household.js": PackageResources.household_js,
        "/shopping.js": PackageResources.shopping_js,
        "/tasks.js": PackageResources.tasks_js,
        "/backlog.js": PackageResources.backlog_js,
        "/kids.js": PackageResources.kids_js,
        "/more.js": PackageResources.more_js,
        "/machines.js": PackageResources.machines_js,
        "/parents.js": PackageResources.parents_js,
        "/celebrate.js": PackageResources.celebrate_js,
        "/welcome.js": PackageResources.welcome_js,
        "/computer.js": PackageResources.computer_js,
        "/phones.js": PackageResources.phones_js,
        "/offline.js": PackageResources.offline_js,
        "/notices.js": PackageResources.notices_js,
        "/connection.js": PackageResources.connection_js,
        "/live.js": PackageResources.live_js,
    ]
    static var appCSS: [UInt8] { PackageResources.app_css }

    /// The service worker, its cache named by the version of the page's files (the first 12 hex
    /// digits of their SHA-256): an agent with other files serves another worker, which the
    /// browser installs, and the phone app takes the new files. The modules it caches are
    /// ``modules``' paths, written in place of its placeholder: the page's modules are listed
    /// here and in Package.swift only.
    static let serviceWorker: [UInt8] = {
        var hash = SHA256()
        for file in [PackageResources.index_html, PackageResources.app_css, PackageResources.icon_svg, PackageResources.manifest_webmanifest]
            + modules.keys.sorted().map({ modules[$0]! }) + [PackageResources.sw_js]
        {
            hash.update(data: file)
        }
        let version = hash.finalize().prefix(6).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let text = String(decoding: PackageResources.sw_js, as: UTF8.self)
        let paths = "[" + modules.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        return Array(
            text.replacing("\"house-pulse-version\"", with: "\"house-pulse-\(version)\"")
                .replacing("[\"/house-pulse-modules.js\"]", with: paths).utf8)
    }()
    static var iconSVG: [UInt8] { PackageResources.icon_svg }
}
