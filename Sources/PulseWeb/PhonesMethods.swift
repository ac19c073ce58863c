import FoundationEssentials
import PeerSync
import PulseCA
import PulseQR

/// The `phones.*` methods (docs/API.md, "Phones"): what the computer's page and
/// `pulse-peer phones` show and do — on or off, the household's phones, "Add a phone" with its
/// two links and QR codes, a waiting phone approved or declined, a phone removed.
extension PhoneService {
    var methods: [String: FrontEndMethod] {
        [
            "phones.get": FrontEndMethod { _ in await self.describe() },
            "phones.set": FrontEndMethod { params in
                guard case let .bool(on)? = params["on"] else {
                    return .refused(.missingParameter, ["method": "phones.set", "key": "on", "type": "boolean"])
                }
                var port: Int?
                if let value = params["port"] {
                    guard let number = value.integerValue, number == 0 || (1024...65535).contains(number) else {
                        return .refused(.phonesPort, ["min": 1024, "max": 65535])
                    }
                    port = Int(number)
                }
                return await self.turn(on: on, port: port)
            },
            "phones.invite": FrontEndMethod { params in await self.invite(params) },
            "phones.approve": FrontEndMethod { params in await self.answer(params, approve: true) },
            "phones.decline": FrontEndMethod { params in await self.answer(params, approve: false) },
            "phones.remove": FrontEndMethod { params in await self.remove(params) },
        ]
    }

    /// This computer's name in the household (as people named it), if it has one.
    func computerName() async -> String? {
        try? await api.read { try $0.machines().first(where: \.isThisMachine)?.name }
    }

    struct Summary {
        let id: String
        let name: String
    }

    func householdSummary() async throws -> Summary {
        try await api.read { Summary(id: $0.householdID, name: try $0.householdName()) }
    }

    /// Why the listener is not served although wanted, as `phones.get` and `caldav.get` give it:
    /// `{code, params, message}`, or null.
    static func problemJSON(_ problem: ErrorBody?) -> JSONValue {
        problem.map { .object(["code": .string($0.code), "params": .object($0.params), "message": .string($0.message)]) } ?? .null
    }

    func describe() async -> ControlResponse {
        // With phones off, a listener bound for CalDAV alone is not the phones' (no addresses,
        // no problem of theirs); phones turned on and refused a port still say why.
        let (settings, listener, tls, problem) = state.withLock { state in
            let life = state.life
            return (
                life.settings, life.phonesOn ? state.listener : nil, life.phonesOn ? state.tls : nil,
                life.phonesOn || !life.calDAV ? life.problem?.body : nil
            )
        }
        // The port served once bound (a port 0 asked for is saved a moment later, after the
        // household was told the addresses: never "port 0" beside a fingerprint).
        var result: [String: JSONValue] = ["on": .bool(settings.on), "port": .integer(Int64(listener?.port ?? settings.port))]
        result["problem"] = Self.problemJSON(problem)
        if let listener, let tls {
            let (names, addresses) = tls.covered
            let hosts = names + addresses.map { $0.contains(":") ? "[\($0)]" : $0 }
            result["addresses"] = .array(hosts.map { .string("https://\($0):\(listener.port)") })
            result["hosts"] = JSONValue(names + addresses) // the first is the links' default
            result["fingerprint"] = (try? HouseholdCA.certificateFingerprint(tls.certificates.root)).map(JSONValue.string) ?? .null
        }
        // The household's phones (replicated: every computer lists and may remove them),
        // with when this computer last saw each.
        let seen = self.seen.withLock { $0 }
        let phones = (try? await api.read { try $0.phones() }) ?? []
        result["phones"] = .array(
            phones.map { phone in
                guard case var .object(fields) = try? JSONValue.from(phone) else { return .null }
                fields["lastSeen"] = seen[phone.id].map { .integer($0) } ?? .null
                return .object(fields)
            })
        result["requests"] = .array(
            pairing.pending().map { request in
                .object([
                    "id": .string(request.id), "name": .string(request.name), "member": request.member.map(JSONValue.string) ?? .null,
                    "address": .string(request.address), "asked": .integer(request.asked), "code": .string(request.code),
                ])
            })
        result["invitationExpires"] = pairing.invitationExpires().map { .integer($0) } ?? .null
        return ControlResponse(ok: true, result: .object(result))
    }

    /// "Add a phone": the two links and their QR codes (the CA's download over plain HTTP; the
    /// pairing link, with the token, over HTTPS only), the fingerprint to compare.
    func invite(_ params: [String: JSONValue]) async -> ControlResponse {
        guard case let .string(rawName)? = params["name"] else {
            return .refused(.missingParameter, ["method": "phones.invite", "key": "name", "type": "string"])
        }
        let name = String(rawName.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !name.isEmpty else { return .refused(.empty, ["field": "name"]) }
        guard name.count <= 100 else { return .refused(.tooLong, ["field": "name", "max": 100]) }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return .refused(.controlCharacters, ["field": "name"])
        }
        var member: String?
        switch params["member"] {
        case nil, .null?: member = nil
        case let .string(value)?:
            // Whose phone: a member of the household now (its id kept), or the invitation is refused.
            do {
                member = try await api.read { try $0.resolveMember(value).id }
            } catch {
                return .failed(error)
            }
        default: return .refused(.wrongType, ["key": "member", "type": "string"])
        }
        guard let (listener, tls) = state.withLock({ state in state.life.phonesOn ? state.listener.flatMap { l in state.tls.map { (l, $0) } } : nil })
        else {
            return .refused(.phonesOff)
        }
        // The host in the links: this computer's `.local` name, which stays when the home
        // network gives the computer a new address (the app installed from it keeps working:
        // issue 51; iOS and Android 12+ resolve it), else the first home-network address;
        // `host` picks another (an address, for a phone that cannot resolve `.local` names).
        let (names, addresses) = tls.covered
        var host = names.first ?? addresses.first ?? ""
        if case let .string(chosen)? = params["host"] {
            guard names.contains(chosen) || addresses.contains(chosen) else {
                return .refused(.phonesHost, ["host": .string(chosen), "hosts": JSONValue(names + addresses)])
            }
            host = chosen
        }
        guard !host.isEmpty else { return .refused(.phonesHost, ["host": "", "hosts": JSONValue(names + addresses)]) }
        let authority = host.contains(":") ? "[\(host)]:\(listener.port)" : "\(host):\(listener.port)"
        let (token, expires) = pairing.invite(name: name, member: member)
        let setup = "http://\(authority)/ca"
        let pair = "https://\(authority)/pair?token=\(token)"
        do {
            return ControlResponse(
                ok: true,
                result: .object([
                    "setup": .string(setup), "pair": .string(pair), "expires": .integer(expires),
                    "fingerprint": .string(try HouseholdCA.certificateFingerprint(tls.certificates.root)),
                    "setupQR": .string(try QRCode(setup).svg()), "pairQR": .string(try QRCode(pair).svg()),
                ]))
        } catch {
            return .failed(error)
        }
    }

    /// Approves a waiting phone (the household's `phone` row is written first: the phone is a
    /// member of the household's list before it gets its cookie) or declines it.
    func answer(_ params: [String: JSONValue], approve: Bool) async -> ControlResponse {
        guard case let .string(id)? = params["id"] else {
            return .refused(.missingParameter, ["method": approve ? "phones.approve" : "phones.decline", "key": "id", "type": "string"])
        }
        guard let request = pairing.pending().first(where: { $0.id == id }) else {
            return .refused(.noSuchRequest, ["id": .string(String(id.prefix(64)))])
        }
        var answer = PhonePairing.Answer.declined
        var phoneID: String?
        if approve {
            let cookie = RandomToken.make()
            let credential = Self.credential(cookie)
            do {
                phoneID = try await api.write { try $0.addPhone(name: request.name, member: request.member, credential: credential).id }
            } catch {
                return .failed(error)
            }
            answer = .approved(cookie: cookie)
        }
        guard pairing.settle(id, answer) else {
            // Answered meanwhile (another page, the CLI): the phone row just written goes again.
            if let phoneID { _ = try? await api.write { try $0.removePhone(phoneID) } }
            return .refused(.noSuchRequest, ["id": .string(String(id.prefix(64)))])
        }
        logger.notice(approve ? "phone added" : "phone declined", metadata: ["request": "\(id)"])
        api.announce(entity: Self.requestEntity) // the other open pages stop asking
        return ControlResponse(ok: true, result: .object(["id": .string(id), "approved": .bool(approve)]))
    }

    /// Removes a phone for good, on every computer (a replicated write): refused here at once,
    /// its open connections closed now, and elsewhere as the removal arrives.
    func remove(_ params: [String: JSONValue]) async -> ControlResponse {
        guard case let .string(id)? = params["id"] else {
            return .refused(.missingParameter, ["method": "phones.remove", "key": "id", "type": "string"])
        }
        do {
            _ = try await api.write { try $0.removePhone(id) }
        } catch {
            return .failed(error)
        }
        known.withLock { $0.forget() }
        state.withLock { $0.listener }?.closeConnections(of: id)
        logger.notice("phone removed", metadata: ["phone": "\(id)"])
        return ControlResponse(ok: true, result: .object(["id": .string(id), "removed": .bool(true)]))
    }
}
