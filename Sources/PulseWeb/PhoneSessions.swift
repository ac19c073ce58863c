import FoundationEssentials
import PeerSync

/// A signed-in phone, as a request's cookie names it.
struct PhoneSession: Sendable, Equatable {
    let id: String
    /// Its member's id (nil: nobody in particular): what its writes are signed with.
    let member: String?
    /// The token its writes carry (`X-Pulse-CSRF`), derived from the cookie.
    let csrf: String
}

/// The phones' sessions (replicated rows: any agent can check them): a phone by its cookie or
/// roaming credential, kept until the household's phones or keys change; its roaming
/// credential, where the household's agents serve phones, a phone's renewal.
extension PhoneService {
    static func credential(_ cookie: String) -> String { WebSessions.hex(WebSessions.digest(cookie)) }

    /// The phone whose session cookie is `cookie`, when it is one of the household's and not removed.
    func identify(_ cookie: String?) async -> PhoneSession? {
        guard let cookie, !cookie.isEmpty, cookie.utf8.count <= 128 else { return nil }
        let credential = Self.credential(cookie)
        return await lookUp(credential, csrf: WebSessions.hex(WebSessions.digest("csrf:" + cookie))) { try $0.phone(credential: credential) }
    }

    /// The phone whose roaming credential is `bearer` (it uses this agent from another agent's
    /// address), when valid now and not removed. No CSRF token: a bearer credential is never
    /// sent by the browser on its own.
    func identify(roaming bearer: String) async -> PhoneSession? {
        guard bearer.utf8.count <= 200 else { return nil }
        return await lookUp("roaming:" + Self.credential(bearer), csrf: "") { try $0.phone(roaming: bearer) }
    }

    /// The phone `find` finds (by credential or roaming credential, not removed), kept under
    /// `key` until the household's phones or keys change (a lookup begun before a change is not
    /// kept), and marked seen now.
    func lookUp(_ key: String, csrf: String, _ find: @escaping @Sendable (Household) throws -> PhoneRecord?) async -> PhoneSession? {
        let (cached, generation) = known.withLock { ($0.sessions[key], $0.generation) }
        var session = cached
        if session == nil {
            guard let phone = try? await api.read(find) else { return nil }
            let found = PhoneSession(id: phone.id, member: phone.memberID, csrf: csrf)
            known.withLock { if $0.generation == generation { $0.sessions[key] = found } }
            session = found
        }
        if let id = session?.id { seen.withLock { $0[id] = WallClock.now() } }
        return session
    }

    /// Closes the connections of every removed phone.
    func closeRemovedPhones() async {
        guard let listener = state.withLock({ $0.listener }) else { return }
        guard let phones = try? await api.read({ try $0.phones() }) else { return }
        for phone in phones where phone.removed != nil { listener.closeConnections(of: phone.id) }
    }

    /// Phone `phone`'s roaming credential now.
    func roaming(_ phone: PhoneSession) async -> String? {
        let id = phone.id
        return try? await api.read { try $0.phoneRoaming(id) }
    }

    /// Where the household's agents serve phones: `[{machine, name, urls, self}]`.
    func agents() async -> JSONValue {
        guard let services = try? await api.read({ try $0.phoneServices() }) else { return .array([]) }
        return .array(
            services.filter { !$0.urls.isEmpty }.map { service in
                .object([
                    "machine": .string(service.machine), "name": service.name.map(JSONValue.string) ?? .null, "urls": JSONValue(service.urls),
                    "self": .bool(service.isThisMachine),
                ])
            })
    }

    /// Whether phone `id` may still sign in (nil: removed or unknown).
    func identifyByID(_ id: String) async -> String? {
        guard let phones = try? await api.read({ try $0.phones() }), let phone = phones.first(where: { $0.id == id }) else { return nil }
        return phone.removed == nil ? id : nil
    }

    /// A new session cookie for `phone` (its old one expired unused: the way back, proven by
    /// its roaming credential); nil when the household refused (the phone was removed).
    func renew(_ phone: PhoneSession) async -> String? {
        let cookie = RandomToken.make()
        let (id, credential) = (phone.id, Self.credential(cookie))
        guard (try? await api.write { try $0.renewPhone(id, credential: credential) }) != nil else { return nil }
        known.withLock { $0.forget() }
        logger.notice("phone signed in again", metadata: ["phone": "\(phone.id)"])
        return cookie
    }
}
