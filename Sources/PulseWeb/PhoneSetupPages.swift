import FoundationEssentials
import PeerSync
import PulseCA

/// What the phones' port answers over plain HTTP (step one of adding a phone, before it
/// trusts the household CA): the CA's download page, the certificate for Android and the
/// profile for iOS, the page's style — and for anything else a redirect to `https://`. A
/// pairing link opened over plain HTTP is refused and its invitation ends (its token may
/// have been seen on the network).
enum PhoneSetupPages {
    static func respond(to request: WebRequest, service: PhoneService, port: Int) async -> WebReply {
        let said = catalogue(for: request, service: service)
        guard let tls = service.tlsNow, let host = request.header("host")?.lowercased(), tls.hosts(port: port).contains(host) else {
            return .response(text(421, said.text("web.phone_wrong_host")))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .response(text(405, said.text("web.method_not_allowed")))
        }
        let (path, query) = WebRules.split(uri: request.uri)
        let root = tls.certificates.root
        switch path {
        case "/ca":
            guard let fingerprint = try? HouseholdCA.certificateFingerprint(root) else { return .response(text(500, said.text("web.not_found"))) }
            // The name the phone's settings list it by (its common name), in the steps.
            let name: [String: JSONValue] = ["name": .string(HouseholdCA.commonName(root) ?? "House Pulse")]
            func item(_ key: String) -> String { "<li>" + (said.text(key, name)).markupEscaped + "</li>" }
            let body = """
                <p>\((said.text("phone.ca.intro")).markupEscaped)</p>
                <p>\((said.text("phone.ca.fingerprint")).markupEscaped)</p><p><code class="fingerprint">\(fingerprint)</code></p>
                <p>\((said.text("phone.ca.name", name)).markupEscaped)</p>
                <h3>\((said.text("phone.ca.ios.title")).markupEscaped)</h3>
                <p><a class="button" href="/ca.mobileconfig">\((said.text("phone.ca.ios.download")).markupEscaped)</a></p>
                <ol>\(item("phone.ca.ios.step1"))\(item("phone.ca.ios.step2"))\(item("phone.ca.ios.step3"))\(item("phone.ca.ios.step4"))</ol>
                <h3>\((said.text("phone.ca.android.title")).markupEscaped)</h3>
                <p><a class="button" href="/ca.crt">\((said.text("phone.ca.android.download")).markupEscaped)</a></p>
                <ol>\(item("phone.ca.android.step1"))\(item("phone.ca.android.step2"))\(item("phone.ca.android.step3"))</ol>
                <p>\((said.text("phone.ca.next")).markupEscaped)</p>
                """
            return .response(WebAnswers.page(200, title: said.text("phone.ca.title"), language: said.language, body: body))
        case "/ca.crt":
            guard let der = try? PhoneProfiles.der(root) else { return .response(text(500, said.text("web.not_found"))) }
            return .response(
                WebResponse(
                    status: 200,
                    headers: [
                        ("Content-Type", "application/x-x509-ca-cert"), ("Content-Disposition", "attachment; filename=\"house-pulse-ca.crt\""),
                        ("Cache-Control", "no-store"),
                    ] + WebRules.securityHeaders, body: der))
        case "/ca.mobileconfig":
            guard let household = try? await service.householdSummary(),
                let profile = try? PhoneProfiles.mobileConfig(root: root, household: household.name, householdID: household.id)
            else { return .response(text(500, said.text("web.not_found"))) }
            return .response(
                WebResponse(
                    status: 200,
                    headers: [
                        ("Content-Type", "application/x-apple-aspen-config"),
                        ("Content-Disposition", "attachment; filename=\"house-pulse.mobileconfig\""), ("Cache-Control", "no-store"),
                    ] + WebRules.securityHeaders, body: Array(profile.utf8)))
        case "/app.css":
            return .response(
                WebResponse(
                    status: 200, headers: [("Content-Type", "text/css; charset=utf-8"), ("Cache-Control", "no-cache")] + WebRules.securityHeaders,
                    body: WebAssets.appCSS))
        case "/pair":
            if let token = query["token"] { service.pairing.burn(token) }
            return .response(
                WebAnswers.page(
                    400, title: said.text("phone.pair.plain.title"), language: said.language,
                    body: "<p>" + (said.text("phone.pair.plain.body")).markupEscaped + "</p>"))
        default:
            return .response(
                WebResponse(
                    status: 308, headers: [("Location", "https://\(host)\(request.uri)"), ("Cache-Control", "no-store")] + WebRules.securityHeaders,
                    body: []))
        }
    }

    /// The phone app asked for while phones are off and CalDAV alone is served: 503 (a phone's
    /// page takes it as its computer out of reach, and uses another that serves phones), and
    /// why, in the reader's language.
    static func phonesOff(_ request: WebRequest, service: PhoneService) -> WebResponse {
        text(503, catalogue(for: request, service: service).text("web.phones_off"))
    }

    /// The reader's language (Accept-Language), else English.
    static func catalogue(for request: WebRequest, service: PhoneService) -> MessageCatalogue {
        (try? MessageCatalogue.load(
            Languages.forAcceptLanguage(request.header("accept-language"), available: MessageCatalogue.languages(home: service.api.home)),
            home: service.api.home)) ?? .english
    }

    static func text(_ status: Int, _ message: String) -> WebResponse {
        WebResponse(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")] + WebRules.securityHeaders,
            body: Array((message + "\n").utf8))
    }
}
