import FoundationEssentials
import PeerSync
import PulseCalDAV
import PulseQR

/// This computer's choice about CalDAV (`HOME/caldav.json`, issue 59): off until a person turns
/// it on. It is served on the phones' listener (HTTPS with the household CA), which is bound for
/// it when phones are off here (``PhoneListenerLife``); on plain HTTP it never is.
struct CalDAVSettings: Codable, Equatable, Sendable {
    static let file = "caldav.json"
    var on = false
}

/// The `caldav.*` methods (docs/API.md, "CalDAV"): on or off, and where apps reach it. Answered on
/// this computer's control socket and loopback page only, as `phones.*` are.
extension PhoneService {
    var calDAVMethods: [String: FrontEndMethod] {
        [
            "caldav.get": FrontEndMethod { _ in self.describeCalDAV() },
            "caldav.set": FrontEndMethod { params in
                guard case let .bool(on)? = params["on"] else {
                    return .refused(.missingParameter, ["method": "caldav.set", "key": "on", "type": "boolean"])
                }
                return await self.turnCalDAV(on: on)
            },
        ]
    }

    /// `{on, served, addresses, problem, davx5QR?}`: served when on and the listener is bound
    /// (`problem`: why not, when on — the household's CA not here yet, the port taken);
    /// the addresses an app is given (its `/dav/` on each of this computer's https addresses),
    /// and for the `.local` name's (else the first), a QR code of its `caldavs://` form, which opens DAVx⁵'s login with the
    /// server filled in (DAVx⁵'s manual, "Integration": an implicit intent; no credentials in it).
    func describeCalDAV() -> ControlResponse {
        let (on, problem) = state.withLock { ($0.life.calDAV, $0.life.problem?.body) }
        let urls = on ? listenerURLs().map { $0 + "/dav/" } : []
        var answer: [String: JSONValue] = ["on": .bool(on), "served": .bool(!urls.isEmpty), "addresses": JSONValue(urls)]
        answer["problem"] = on && urls.isEmpty ? Self.problemJSON(problem) : .null
        // The `.local` name where there is one (it survives a new address from the home network), as the page gives it.
        let named = urls.first { $0.split(separator: "/").dropFirst().first?.split(separator: ":").first?.hasSuffix(".local") == true }
        if let first = named ?? urls.first, first.hasPrefix("https://"), let qr = try? QRCode("caldavs://" + first.dropFirst("https://".count)).svg() {
            answer["davx5QR"] = .string(qr)
        }
        return ControlResponse(ok: true, result: .object(answer))
    }

    var calDAVOn: Bool { state.withLock { $0.life.calDAV } }

    /// A CalDAV request on the phones' listener: over TLS, the service's answer (404 while CalDAV
    /// is off here); on plain HTTP, refused before anything is read (credentials never in clear).
    func respondCalDAV(to request: WebRequest, tls: Bool) async -> WebResponse {
        guard tls else {
            return WebResponse(
                status: 403, headers: [("Content-Type", "text/plain; charset=utf-8")] + WebRules.securityHeaders,
                body: Array("CalDAV is served over HTTPS only: use https:// and this computer's address.\n".utf8))
        }
        guard calDAVOn else {
            return WebResponse(status: 404, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array("Not found.\n".utf8))
        }
        let answer = await calDAV.respond(
            DAVHTTPRequest(method: request.method, path: request.uri, headers: request.headers, body: request.body), client: request.remote)
        return WebResponse(status: answer.status, headers: answer.headers + [("Cache-Control", "no-store")], body: answer.body)
    }
}
