import Crypto
import FoundationEssentials
import PeerSync
import PulseCalendar
import Synchronization

/// What the service needs of the agent: the household, read and written in process, as the
/// page's own parts ask it (``LocalAPI``). A test gives a household of its own.
public protocol DAVHost: Sendable {
    func read<T: Sendable>(_ body: @escaping @Sendable (Household) throws -> T) async throws -> T
    func write<T: Sendable>(_ body: @escaping @Sendable (Household) throws -> T) async throws -> T
}

extension LocalAPI: DAVHost {}

/// An HTTP answer, without NIO's types.
public struct DAVAnswer: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(_ status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// The household's CalDAV service (issue 59, decision 0025): who is signed in, and what each
/// request reads. Served by the phones' listener, over TLS only; the household is read through
/// the host on every request (no copy to keep true), each to-do's text made from its row, its
/// ETag from that text.
///
/// Writes are household writes by the app's member, all of a PUT's or none (``DAVWrite``); a
/// new to-do is the household's own addition, kept with the UID and name the app gave it.
public final class DAVService: Sendable {
    let host: any DAVHost
    let now: @Sendable () -> Int64
    /// Wrong passwords per address (``DAVSignInLimiter``).
    private let limiter = Mutex(DAVSignInLimiter())
    /// Credentials verified since the start: an HMAC of the `Authorization` header under a key
    /// made at start (never the password), to the password it was. Checked again on every
    /// request against the household (revoked, or its member removed: refused at once).
    private let verified = Mutex<[Data: SignedIn]>([:])
    private let key = SymmetricKey(size: .bits256)
    /// One scrypt at a time on this agent, whoever asks.
    private let checking = AsyncGate()
    /// What each list held when its token was handed out, so a `sync-collection` answers what
    /// moved since (``DAVSyncHistory``).
    private let history = Mutex(DAVSyncHistory())
    static let maxVerified = 256
    /// Checked against when a user name matches no password (its hash matches nothing typed:
    /// 32 bytes no scrypt gives for a 20-letter password but by chance).
    static let nobody = AppPasswordCandidate(
        id: "", memberID: "", hash: "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    static let realm = "House Pulse"

    struct SignedIn: Sendable {
        let password: String
        let member: String
        /// When this agent last noted the password's use (written at most hourly anyway).
        var noted: Int64
    }

    public init(host: any DAVHost, now: @escaping @Sendable () -> Int64 = { WallClock.now() }) {
        self.host = host
        self.now = now
    }

    /// Whether `method` and `path` are CalDAV's (the phones' listener hands these to ``respond``):
    /// the `/dav/` space, the well-known address, and a PROPFIND of `/`, where clients given
    /// the bare host ask who they are.
    public static func serves(method: String, path: String) -> Bool {
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        if bare == "/" { return method.uppercased() == "PROPFIND" }
        return bare.hasPrefix("/dav/") || bare == "/dav" || bare.hasPrefix("/.well-known/caldav")
    }

    /// Answers one request from `client` (its address: the rate limit's key). Only ever called
    /// for a TLS connection: Basic credentials never cross the network in clear.
    public func respond(_ request: DAVHTTPRequest, client: String) async -> DAVAnswer {
        var request = request
        let path = request.path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        if path == "/" || path == "/dav" { request.path = "/dav/" }
        if DAVPath.target(request.path) == .wellKnown {
            // RFC 6764 §5: no credentials needed to learn where the service is.
            return DAVAnswer(301, headers: [("Location", "/dav/"), ("Content-Length", "0")] + Self.davHeaders)
        }
        let signedIn: SignedIn
        switch await signIn(request, client: client) {
        case let .success(who): signedIn = who
        case let .failure(answer): return answer
        }
        let operation: DAVOperation
        do { operation = try DAVRequestReader.read(request) } catch { return Self.refused(error) }
        switch operation {
        case let .put(target, object, ifMatch, ifNoneMatch):
            let edit: DAVToDoEdit
            do { edit = try DAVToDoEdit(object) } catch { return Self.refused(error) }
            return await write(target, signedIn, ifMatch: ifMatch, ifNoneMatch: ifNoneMatch, edit: edit)
        case let .delete(target, ifMatch):
            return await write(target, signedIn, ifMatch: ifMatch, ifNoneMatch: false, edit: nil)
        default: break
        }
        do {
            let shelf = try await host.read { household in try DAVShelf(household, member: signedIn.member, password: signedIn.password) }
            guard shelf.live else {
                forget(password: signedIn.password)
                return Self.unauthorized("this app password was revoked, or its member removed")
            }
            return try answer(operation, shelf: shelf)
        } catch let refusal as DAVRefusal {
            return Self.refused(refusal)
        } catch {
            return Self.refused(DAVRefusal(503, "unavailable", "the household cannot be read now: \(error)"))
        }
    }

    // MARK: Signing in

    enum SignInResult {
        case success(SignedIn)
        case failure(DAVAnswer)
    }

    private func signIn(_ request: DAVHTTPRequest, client: String) async -> SignInResult {
        guard let header = request.header("authorization") else { return .failure(Self.unauthorized("no credentials")) }
        let digest = Data(HMAC<SHA256>.authenticationCode(for: Data(header.utf8), using: key))
        let time = now()
        if let known = verified.withLock({ $0[digest] }) {
            if time - known.noted >= 3_600_000 {
                verified.withLock { $0[digest]?.noted = time }
                try? await host.write { try $0.noteAppPasswordUse(known.password) }
            }
            return .success(known)
        }
        if let wait = limiter.withLock({ $0.wait(for: client, now: time) }) {
            let seconds = (wait + 999) / 1000
            return .failure(
                Self.refused(
                    DAVRefusal(429, "too_many_attempts", "too many wrong passwords from this address: try again in \(seconds) s"),
                    headers: [("Retry-After", "\(seconds)")]))
        }
        guard let credentials = DAVCredentials(header: header) else {
            limiter.withLock { $0.failed(client, now: time) }
            return .failure(Self.unauthorized("credentials that are not HTTP Basic"))
        }
        let candidates = (try? await host.read { try $0.appPasswordCandidates(login: credentials.user) }) ?? []
        await checking.enter()
        let match = try? await onDispatchThread {
            // A user name nobody has costs one scrypt too, so the time taken does not say which names exist.
            if candidates.isEmpty { _ = Household.appPasswordMatches(credentials.password, Self.nobody) }
            return candidates.first { Household.appPasswordMatches(credentials.password, $0) }
        }
        await checking.leave()
        guard let match else {
            limiter.withLock { $0.failed(client, now: now()) }
            return .failure(Self.unauthorized("a wrong user name or password"))
        }
        limiter.withLock { $0.succeeded(client) }
        let who = SignedIn(password: match.id, member: match.memberID, noted: now())
        verified.withLock { verified in
            if verified.count >= Self.maxVerified { verified.removeAll() }
            verified[digest] = who
        }
        try? await host.write { try $0.noteAppPasswordUse(match.id) }
        return .success(who)
    }

    private func forget(password: String) {
        verified.withLock { verified in verified = verified.filter { $0.value.password != password } }
    }

    // MARK: Answers

    static let davHeaders: [(String, String)] = [("DAV", "1, 3, calendar-access")]
    static let allowed = "OPTIONS, GET, HEAD, PROPFIND, PROPPATCH, REPORT, PUT, DELETE"

    private func answer(_ operation: DAVOperation, shelf: DAVShelf) throws(DAVRefusal) -> DAVAnswer {
        switch operation {
        case let .options(target):
            _ = try shelf.resource(target)
            return DAVAnswer(200, headers: Self.davHeaders + [("Allow", Self.allowed), ("Content-Length", "0")])
        case let .propfind(target, depth, props):
            var status = DAVMultistatus()
            let resource = try shelf.resource(target)
            status.add(resource, props)
            let children = depth == .one ? shelf.children(of: target) : []
            for child in children { status.add(child, props) }
            // A token a client may later sync from (DAVx⁵ reads it here first).
            for case let .collection(_, id, _, _) in [resource] + children { if let collection = shelf.collection(id) { remember(collection) } }
            return Self.multistatus(status)
        case let .proppatch(target, names):
            // Nothing a client may set here (a colour, an order): each refused, nothing changed.
            _ = try shelf.resource(target)
            let refused = names.map { DAVElement($0.namespace, $0.name) }
            let response = DAVElement(
                DAVXML.dav, "response",
                children: [DAVProperties.href(target), DAVMultistatus.propstat(refused, status: 403)])
            return Self.xml(207, DAVElement(DAVXML.dav, "multistatus", children: [response]))
        case let .report(target, _, report):
            return try self.report(report, on: target, shelf: shelf)
        case let .get(target, head):
            guard case .object = target else {
                throw DAVRefusal(405, "not_an_object", "only a to-do (NAME.ics) can be fetched: ask collections with PROPFIND")
            }
            guard case let .object(_, _, _, etag, text) = try shelf.resource(target) else {
                throw DAVRefusal(404, "not_found", "no such to-do")
            }
            let body = Array(text.utf8)
            return DAVAnswer(
                200,
                headers: Self.davHeaders + [("Content-Type", "text/calendar; charset=utf-8"), ("ETag", etag)]
                    + (head ? [("Content-Length", "\(body.count)")] : []),
                body: head ? [] : body)
        case .put, .delete:
            throw DAVRefusal(500, "unexpected", "a write reached the reads")
        }
    }

    /// What a write comes to, decided on the store's actor with the household as it is then.
    private enum WriteOutcome: Sendable {
        case done
        case created
        case refused(DAVRefusal)
        /// A household rule said no: its code and its sentence in the member's language.
        case declined(code: String, message: String, notFound: Bool)
    }

    /// A PUT (`edit`) or DELETE (nil) of a to-do: its preconditions (`If-Match`, `If-None-Match`)
    /// checked, then the household writes it comes to (``DAVWrite``) carried out as the app's
    /// member, all in one turn of the store's actor, so nothing can change in between, and as one
    /// transaction: a refusal changes nothing.
    private func write(_ target: DAVTarget, _ signedIn: SignedIn, ifMatch: String?, ifNoneMatch: Bool, edit: DAVToDoEdit?) async -> DAVAnswer {
        let member = signedIn.member, password = signedIn.password
        let outcome: WriteOutcome
        do {
            outcome = try await host.write { household -> WriteOutcome in
                let shelf = try DAVShelf(household, member: member, password: password)
                guard shelf.live else { return .refused(DAVRefusal(401, "unauthorized", "this app password was revoked")) }
                guard case let .object(user, id, name) = target, user == member else {
                    return .refused(DAVRefusal(404, "not_found", "no such resource"))
                }
                guard let collection = shelf.collection(id) else {
                    return .refused(DAVRefusal(409, "no_collection", "no such list"))
                }
                let existing = collection.objects.first { $0.name == name }
                if let existing {
                    if ifNoneMatch { return .refused(DAVRefusal(412, "precondition_failed", "the to-do already exists")) }
                    if let ifMatch, ifMatch != "*", ifMatch != existing.etag {
                        return .refused(DAVRefusal(412, "precondition_failed", "the to-do changed since it was read: read it again"))
                    }
                } else {
                    if let ifMatch {
                        return .refused(
                            DAVRefusal(412, "precondition_failed", ifMatch == "*" ? "no such to-do" : "the to-do \(ifMatch.prefix(40)) names is gone"))
                    }
                    guard let edit else { return .refused(DAVRefusal(404, "not_found", "no such resource")) }
                    if let twin = collection.objects.first(where: { $0.uid == edit.uid }) {
                        return .refused(
                            DAVRefusal(
                                403, "uid_taken", "\(twin.name.prefix(80)) in this list has this UID already",
                                precondition: DAVName(DAVXML.caldav, "no-uid-conflict")))
                    }
                }
                if let existing, let edit, edit.uid != existing.uid {
                    return .refused(
                        DAVRefusal(
                            403, "uid_changed", "a to-do keeps its UID: PUT a new one under a new name", precondition: DAVName(DAVXML.caldav, "no-uid-conflict")
                        ))
                }
                let me = household.acting(as: member)
                do {
                    try me.allOrNothing {
                        guard let edit else {
                            if let existing { try DAVWrite.delete(existing.row, on: me) }
                            return
                        }
                        let row = try existing?.row ?? DAVWrite.add(edit, to: collection.holds, on: me)
                        var asked = edit
                        // An item brought back from the restock pool (or on the list already) keeps its
                        // name's spelling and its note unless the app gave another, as on the page.
                        if existing == nil, case let .item(item) = row {
                            if asked.summary.trimming(" \t\r\n").lowercased() == item.name.lowercased() { asked.summary = item.name }
                            if asked.description == nil { asked.description = item.note }
                        }
                        for write in try DAVWrite.plan(asked, of: row) { try write.run(on: me) }
                        let kept = edit.kept.isEmpty ? nil : edit.kept.text
                        let record = CalendarObjectRecord(id: row.id, kind: row.kind, uid: edit.uid, href: name, kept: kept)
                        let ours = edit.uid == row.id && name == "\(row.id).ics" && kept == nil
                        // What the household kept of it, as read in this turn (an item brought back from the
                        // restock pool is in the list already): no second read of every object.
                        let known = collection.objects.first { $0.row.id == row.id }?.record
                        if known != nil || !ours { try me.keepCalendarObject(record) }
                    }
                } catch let refusal as DAVRefusal {
                    return .refused(refusal)
                } catch {
                    let refusal = Refusal(error)
                    let words = MessageCatalogue.builtIn(shelf.language) ?? .english
                    return .declined(code: refusal.code.rawValue, message: refusal.message(words), notFound: refusal.code == .notFound)
                }
                return existing == nil ? .created : .done
            }
        } catch {
            return Self.refused(DAVRefusal(503, "unavailable", "the household cannot be written now: \(error)"))
        }
        switch outcome {
        case .done:
            return DAVAnswer(204, headers: Self.davHeaders + [("Content-Length", "0")])
        case .created:
            return DAVAnswer(201, headers: Self.davHeaders + [("Content-Length", "0")])
        case let .refused(refusal):
            if refusal.status == 401 {
                forget(password: password)
                return Self.unauthorized("this app password was revoked, or its member removed")
            }
            return Self.refused(refusal)
        case let .declined(code, message, notFound):
            return Self.refused(DAVRefusal(notFound ? 404 : 403, code, message, precondition: notFound ? nil : DAVWrite.invalid))
        }
    }

    private func report(_ report: DAVReport, on target: DAVTarget, shelf: DAVShelf) throws(DAVRefusal) -> DAVAnswer {
        var status = DAVMultistatus()
        switch report {
        case let .multiget(props, hrefs):
            _ = try shelf.resource(target)
            for href in hrefs {
                if let target = DAVPath.target(href), case .object = target, let object = try? shelf.resource(target) {
                    status.add(object, props)
                } else {
                    status.add(href: href, status: 404)
                }
            }
        case let .query(props, filter):
            guard case let .collection(_, id) = target, let collection = shelf.collection(id) else {
                throw DAVRefusal(403, "not_a_collection", "a calendar-query asks a to-do list", precondition: DAVName(DAVXML.caldav, "supported-report"))
            }
            for object in collection.objects where filter.matches(object.calendar) { status.add(shelf.resource(of: object, in: collection), props) }
        case let .sync(props, token, _):
            guard case let .collection(_, id) = target, let collection = shelf.collection(id) else {
                throw DAVRefusal(403, "not_a_collection", "a sync-collection asks a to-do list", precondition: DAVName(DAVXML.dav, "supported-report"))
            }
            // A token is the list's state when it was handed out (``DAVShelf/Collection/token``):
            // the latest answers nothing; one this agent remembers answers what changed since
            // (each changed to-do, each gone one as 404); any other asks the client to sync
            // again from the start (an agent restarted since, or another agent's token:
            // RFC 6578 §3.2 lets a server refuse a token).
            if let token, token != collection.token {
                guard let before = history.withLock({ $0.recall(token, collection: id) }) else {
                    throw DAVRefusal(
                        403, "valid_sync_token", "this agent no longer knows this token: sync again from the start",
                        precondition: DAVName(DAVXML.dav, "valid-sync-token"))
                }
                var now = Set<String>()
                for object in collection.objects {
                    now.insert(object.name)
                    if before[object.name] != object.etag { status.add(shelf.resource(of: object, in: collection), props) }
                }
                for name in before.keys.sorted() where !now.contains(name) {
                    status.add(href: DAVTarget.object(user: shelf.member, collection: id, name: name).href, status: 404)
                }
            } else if token == nil {
                for object in collection.objects { status.add(shelf.resource(of: object, in: collection), props) }
            }
            remember(collection)
            status.syncToken = collection.token
        }
        return Self.multistatus(status)
    }

    private func remember(_ collection: DAVShelf.Collection) {
        history.withLock { $0.remember(collection.token, collection: collection.id, objects: collection.objects.map { ($0.name, $0.etag) }) }
    }

    static func multistatus(_ status: DAVMultistatus) -> DAVAnswer {
        DAVAnswer(207, headers: davHeaders + [("Content-Type", "application/xml; charset=utf-8")], body: Array(status.document.utf8))
    }

    static func xml(_ code: Int, _ root: DAVElement) -> DAVAnswer {
        DAVAnswer(code, headers: davHeaders + [("Content-Type", "application/xml; charset=utf-8")], body: Array(DAVXML.serialize(root).utf8))
    }

    static func unauthorized(_ why: String) -> DAVAnswer {
        refused(
            DAVRefusal(401, "unauthorized", "sign in with your user name and an app password (\(why))"),
            headers: [("WWW-Authenticate", "Basic realm=\"\(realm)\", charset=\"UTF-8\"")])
    }

    /// A refusal: its status, and a `DAV:error` body naming its precondition (RFC 4918 §16) and
    /// saying why in words (`X-Pulse-Refusal` carries its code, for tests and logs).
    static func refused(_ refusal: DAVRefusal, headers: [(String, String)] = []) -> DAVAnswer {
        var children: [DAVElement] = []
        if let precondition = refusal.precondition { children.append(DAVElement(precondition.namespace, precondition.name)) }
        children.append(DAVElement("http://house-pulse.invalid/ns/", "reason", text: refusal.detail))
        let body = DAVXML.serialize(DAVElement(DAVXML.dav, "error", children: children))
        return DAVAnswer(
            refusal.status, headers: davHeaders + headers + [("Content-Type", "application/xml; charset=utf-8"), ("X-Pulse-Refusal", refusal.code)],
            body: Array(body.utf8))
    }
}

/// The tokens this agent handed out, each with what its list held then (each to-do's name and
/// ETag): what a `sync-collection` compares against. In memory, bounded (at most ``maxTokens``
/// tokens and ``maxObjects`` to-dos in all, the least recently used forgotten first): a token
/// forgotten, or made before the agent started, gets 403 `valid-sync-token`, and the client
/// syncs again from nothing, as RFC 6578 has it.
struct DAVSyncHistory: Sendable {
    static let maxTokens = 256
    static let maxObjects = 20_000
    private struct Entry: Sendable {
        var collection: String
        var objects: [String: String]
        var used: UInt64
    }
    private var entries: [String: Entry] = [:]
    private var objects = 0
    private var clock: UInt64 = 0

    mutating func remember(_ token: String, collection: String, objects list: [(String, String)]) {
        clock += 1
        if entries[token] != nil {
            entries[token]?.used = clock
            return
        }
        guard list.count <= Self.maxObjects else { return }
        entries[token] = Entry(collection: collection, objects: Dictionary(list, uniquingKeysWith: { a, _ in a }), used: clock)
        objects += list.count
        while entries.count > Self.maxTokens || objects > Self.maxObjects,
            let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key
        {
            objects -= entries.removeValue(forKey: oldest)?.objects.count ?? 0
        }
    }

    mutating func recall(_ token: String, collection: String) -> [String: String]? {
        guard let entry = entries[token], entry.collection == collection else { return nil }
        clock += 1
        entries[token]?.used = clock
        return entry.objects
    }

    var count: Int { entries.count }
}
