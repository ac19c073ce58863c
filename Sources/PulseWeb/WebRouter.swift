import FoundationEssentials
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
    /// is (``ComputerPage/clientOwner``).
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

/// A request signed in: the caller the API sees, the token its writes must carry, and the
/// phone it is (nil: the computer's page).
struct WebCaller: Sendable {
    let api: APICaller
    let csrf: String
    var phone: PhoneSession? = nil
}

/// How a request reached the API: refused or answered before it (a cross-origin preflight),
/// or on with the bearer credential it carries and the cross-origin headers its answer gets.
enum WebCrossing {
    case answered(WebReply)
    case onward(bearer: String?, cors: [(String, String)])
}

/// Who a ``WebRouter`` serves (issue 55): the hosts it answers, how a request authenticates to
/// a caller, the methods it allows (``apiAudience``: the registry decides), and its own pages
/// and API routes. Two: ``ComputerPage`` (loopback, this computer's person) and ``PhoneSite``
/// (the home network, the household's phones).
protocol WebAudience: Sendable {
    /// Who its callers are to the API's registry.
    var apiAudience: APIAudience { get }
    /// The session cookie's name (per port: two households' pages on one machine keep their own
    /// sessions) and attributes.
    var cookieName: String { get }
    var cookieAttributes: String { get }
    /// A refusal of a request for a host not its own (421); nil: one of its own.
    func wrongHost(_ request: WebRequest, _ said: MessageCatalogue) -> WebResponse?
    /// The page at `/`.
    func index() async -> WebResponse
    /// One of its own pages (`/login`, `/pair`) at `path`; nil: none.
    func page(_ path: String, query: [String: String], _ request: WebRequest, _ said: MessageCatalogue) -> WebResponse?
    /// Cross-origin requests to the API: refused or answered here, or on.
    func crossing(_ request: WebRequest, path: String) -> WebCrossing
    /// The caller whose session `cookie` (or `bearer`) is; nil: not signed in.
    func caller(cookie: String?, bearer: String?) async -> WebCaller?
    /// Whether a write comes from its own page.
    func sameOrigin(_ request: WebRequest) -> Bool
    /// One of its own API routes, after the session's and the write's checks; nil: none.
    func route(_ request: WebRequest, path: String, caller: WebCaller, bearer: String?) async -> WebReply?
    /// What the session (`/api/session`) says beyond the shared fields; the headers its answer gets.
    func session(_ session: inout [String: JSONValue], caller: WebCaller, cookie: String?, bearer: String?) async -> [(String, String)]
    /// The agent's status (`body`, its JSON) as its callers may see it.
    func status(_ body: Data) -> WebResponse
    /// The live feed for `caller`.
    func events(resume: String?, caller: WebCaller, _ request: WebRequest, cors: [(String, String)]) -> WebReply
    /// Signs `caller` out.
    func signOut(_ caller: WebCaller, cookie: String?) async
}

/// Decides every answer of the page (docs/API.md, "The web page"): the Host check first,
/// then the page's files, its audience's own pages, and the JSON API behind the session, the
/// `Origin` check and the CSRF token. What differs between the computer's page and the
/// phones' is its ``WebAudience``; what is the same is here.
struct WebRouter<Audience: WebAudience>: Sendable {
    let api: LocalAPI
    var audience: Audience

    static var csrfHeader: String { "x-pulse-csrf" }

    func respond(to request: WebRequest) async -> WebReply {
        let said = words(Languages.forAcceptLanguage(request.header("accept-language"), available: MessageCatalogue.languages(home: api.home)))
        if let wrong = audience.wrongHost(request, said) { return .response(wrong) }
        let (path, query) = WebRules.split(uri: request.uri)
        if path.hasPrefix("/api/") { return await apiCall(request, path: path, query: query) }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .response(WebAnswers.text(405, said.text("web.method_not_allowed") + "\n", extra: [("Allow", "GET")]))
        }
        switch path {
        case "/", "/index.html": return .response(await audience.index())
        case "/app.css": return .response(WebAnswers.asset(WebAssets.appCSS, "text/css; charset=utf-8"))
        case "/icon.svg": return .response(WebAnswers.asset(WebAssets.iconSVG, "image/svg+xml"))
        case "/icon-192.png": return .response(WebAnswers.asset(PackageResources.icon_192_png, "image/png"))
        case "/icon-512.png": return .response(WebAnswers.asset(PackageResources.icon_512_png, "image/png"))
        case "/manifest.webmanifest": return .response(WebAnswers.asset(PackageResources.manifest_webmanifest, "application/manifest+json"))
        // The phone app's service worker (offline), a module worker for the root scope.
        case "/sw.js": return .response(WebAnswers.asset(WebAssets.serviceWorker, "text/javascript; charset=utf-8"))
        default:
            if let own = audience.page(path, query: query, request, said) { return .response(own) }
            if let module = WebAssets.modules[path] { return .response(WebAnswers.asset(module, "text/javascript; charset=utf-8")) }
            // The message catalogue the page renders its sentences from (the agent's own).
            // A home's own file over the built-in one; English where the language is unknown.
            if path.hasPrefix("/messages/"), path.hasSuffix(".json") {
                let language = String(path.dropFirst("/messages/".count).dropLast(".json".count))
                guard MessageCatalogue.languages(home: api.home).contains(language) else {
                    return .response(WebAnswers.text(404, said.text("web.not_found") + "\n"))
                }
                return .response(WebAnswers.asset(words(language).json, "application/json; charset=utf-8"))
            }
            return .response(WebAnswers.text(404, said.text("web.not_found") + "\n"))
        }
    }

    /// The words of `language` for this household (English when its home file is broken).
    func words(_ language: String) -> MessageCatalogue {
        (try? MessageCatalogue.load(language, home: api.home)) ?? .english
    }

    // MARK: The JSON API

    private func apiCall(_ request: WebRequest, path: String, query: [String: String]) async -> WebReply {
        switch audience.crossing(request, path: path) {
        case let .answered(reply): return reply
        case let .onward(bearer, cors):
            let reply = await apiAnswer(request, path: path, query: query, bearer: bearer, cors: cors)
            guard !cors.isEmpty, case var .response(response) = reply else { return reply }
            response.headers += cors
            return .response(response)
        }
    }

    private func apiAnswer(
        _ request: WebRequest, path: String, query: [String: String], bearer: String?, cors: [(String, String)]
    ) async -> WebReply {
        let cookie = WebRules.cookie(audience.cookieName, in: request.headers("cookie"))
        guard let caller = await audience.caller(cookie: cookie, bearer: bearer) else {
            return .response(WebAnswers.refused(401, .notSignedIn))
        }
        guard request.method == "GET" || request.method == "POST" else {
            return .response(WebAnswers.refused(405, .methodNotAllowed, ["allowed": ["GET", "POST"]], extra: [("Allow", "GET, POST")]))
        }
        // A call that only reads may come as a GET (below): it needs the page's token as a POST
        // does, and any Origin it names must be the page's (a browser names none on a GET of
        // the page's own; no other site can send the token's header without a preflight, which
        // is never granted to a cookie).
        if request.method == "POST" || path.hasPrefix("/api/call/"), bearer == nil {
            let named = request.method == "POST" || request.header("origin") != nil
            guard !named || audience.sameOrigin(request) else { return .response(WebAnswers.refused(403, .wrongOrigin)) }
            guard let sent = request.header(Self.csrfHeader), WebSessions.same(sent, caller.csrf) else {
                return .response(WebAnswers.refused(403, .missingToken))
            }
        }
        if let own = await audience.route(request, path: path, caller: caller, bearer: bearer) { return own }
        switch (request.method, path) {
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
                "csrf": .string(caller.csrf), "home": .string(api.home.path), "language": .string(language), "languages": .object(languages),
            ]
            if api.welcome { session["welcome"] = .bool(true) } // no household yet: the page's welcome
            // What the page may ask with GET: a browser that opens a connection for every POST
            // (WebKitGTK's libsoup: a TLS handshake each on a phone) reuses one for these.
            session["reads"] = JSONValue(api.reads(for: audience.apiAudience))
            let extra = await audience.session(&session, caller: caller, cookie: cookie, bearer: bearer)
            return .response(WebAnswers.json(200, session, extra: extra))
        case ("GET", "/api/status"):
            do {
                return .response(audience.status(try JSONEncoder().encode(try await api.status())))
            } catch {
                return .response(WebAnswers.json(500, ["error": Refusal(error).body.json]))
            }
        case ("GET", "/api/events"):
            let resume = request.header("last-event-id") ?? query["resume"]
            return audience.events(resume: resume?.isEmpty == true ? nil : resume, caller: caller, request, cors: cors)
        case ("POST", "/api/logout"):
            await audience.signOut(caller, cookie: cookie)
            return .response(
                WebAnswers.json(200, ["ok": .bool(true)], extra: [("Set-Cookie", "\(audience.cookieName)=; \(audience.cookieAttributes); Max-Age=0")]))
        case ("POST", _) where path.hasPrefix("/api/call/"), ("GET", _) where path.hasPrefix("/api/call/"):
            let method = String(path.dropFirst("/api/call/".count))
            guard api.knows(method, for: audience.apiAudience) else {
                return .response(WebAnswers.refused(404, .unknownMethod, ["method": .string(method)]))
            }
            // GET: a method that only reads, its parameters the query's `params` (JSON).
            let reading = request.method == "GET"
            if reading, !api.onlyReads(method, for: audience.apiAudience) {
                return .response(WebAnswers.refused(405, .methodNotAllowed, ["allowed": ["POST"]], extra: [("Allow", "POST")]))
            }
            guard reading || request.header("content-type")?.lowercased().hasPrefix("application/json") == true else {
                return .response(WebAnswers.refused(415, .notJSON))
            }
            // A query naming `params` that does not decode (a broken escape) is refused, not read as none.
            if reading, query["params"] == nil, WebRules.names("params", inQueryOf: request.uri) {
                return .response(WebAnswers.refused(400, .notJSON))
            }
            let json = reading ? query["params"].map { Array($0.utf8) } ?? [] : request.body
            let params: [String: JSONValue]
            if json.isEmpty {
                params = [:]
            } else {
                guard case let .object(object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(json)) else {
                    return .response(WebAnswers.refused(400, .notJSON))
                }
                params = object
            }
            let answer = await api.call(method, params, as: caller.api)
            if answer.ok { return .response(WebAnswers.json(200, ["result": answer.result ?? .null])) }
            return .response(WebAnswers.json(422, ["error": (answer.error ?? Refusal(.failed, ["detail": "refused"]).body).json]))
        default:
            return .response(WebAnswers.refused(404, .noSuchPath, ["path": .string(path)]))
        }
    }
}

/// The answers both audiences give: JSON, refusals, text, the page's files, pages of words.
enum WebAnswers {
    static let maxBody = 64 * 1024

    static func apiHeaders(_ type: String) -> [(String, String)] {
        [("Content-Type", type), ("Cache-Control", "no-store")] + WebRules.securityHeaders
    }

    static func json(_ status: Int, _ object: [String: JSONValue], extra: [(String, String)] = []) -> WebResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let body = (try? encoder.encode(JSONValue.object(object))).map(Array.init) ?? Array("{}".utf8)
        return WebResponse(status: status, headers: apiHeaders("application/json") + extra, body: body)
    }

    /// A refusal of the page's API: `{"error": {"code", "params", "message"}}`.
    static func refused(
        _ status: Int, _ code: Refusal.Code, _ params: [String: JSONValue] = [:],
        extra: [(String, String)] = []
    ) -> WebResponse {
        json(status, ["error": Refusal(code, params).body.json], extra: extra)
    }

    static func text(_ status: Int, _ message: String, extra: [(String, String)] = []) -> WebResponse {
        WebResponse(status: status, headers: apiHeaders("text/plain; charset=utf-8") + extra, body: Array(message.utf8))
    }

    static func asset(_ bytes: [UInt8], _ type: String) -> WebResponse {
        // Revalidated each time: a new agent's page is used at once after an upgrade.
        WebResponse(
            status: 200, headers: [("Content-Type", type), ("Cache-Control", "no-cache")] + WebRules.securityHeaders,
            body: bytes)
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
