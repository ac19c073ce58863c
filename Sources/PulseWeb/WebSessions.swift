import Crypto
import FoundationEssentials
import PeerSync
import Synchronization

/// The browsers logged in to this page: a session cookie (HttpOnly, SameSite=Strict) and
/// its CSRF token, both 32 random bytes. Kept as SHA-256 digests of the cookie (never the
/// cookie itself), saved through `save` (the home's `web-sessions`, 0600) when a session
/// begins or ends, so an open page stays signed in across an agent restart; at most
/// ``capacity`` at once (the least recently used is dropped).
final class WebSessions: Sendable {
    static let capacity = 32
    /// A session unused this long ends (milliseconds: 30 days).
    static let idleLifetime: Int64 = 30 * 86_400_000

    private struct Session {
        let csrf: String
        var lastUsed: Int64
    }

    /// The saved form: one entry per session.
    private struct Saved: Codable {
        let digest: String
        let csrf: String
        let lastUsed: Int64
    }

    private let sessions: Mutex<[Data: Session]>
    private let save: @Sendable (Data) -> Void

    /// `saved`: what `save` wrote before (a file that cannot be read starts empty).
    init(saved: Data? = nil, save: @escaping @Sendable (Data) -> Void = { _ in }) {
        var sessions: [Data: Session] = [:]
        if let saved, let entries = try? JSONDecoder().decode([Saved].self, from: saved) {
            for entry in entries.suffix(Self.capacity) {
                guard let digest = Self.bytes(hex: entry.digest), digest.count == 32, entry.csrf.utf8.count <= 128 else { continue }
                sessions[digest] = Session(csrf: entry.csrf, lastUsed: entry.lastUsed)
            }
        }
        self.sessions = Mutex(sessions)
        self.save = save
    }

    private func persist(_ sessions: [Data: Session]) {
        let entries = sessions.map {
            Saved(digest: Self.hex($0.key), csrf: $0.value.csrf, lastUsed: $0.value.lastUsed)
        }
        if let data = try? JSONEncoder().encode(entries) { save(data) }
    }

    static func bytes(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var data = Data()
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            data.append(byte)
        }
        return data
    }

    static func hex(_ bytes: Data) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    static func digest(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }

    /// A public name for a secret: the first 16 hex digits of its digest (a phone's waiting
    /// request is named so; it reveals nothing of the secret).
    static func id(ofDigest digest: Data) -> String { String(hex(digest).prefix(16)) }

    /// A new session: the cookie's value and the CSRF token the page sends back.
    func create(now: Int64 = WallClock.now()) -> (cookie: String, csrf: String) {
        let cookie = RandomToken.make()
        let csrf = RandomToken.make()
        sessions.withLock { sessions in
            sessions = sessions.filter { now - $0.value.lastUsed < Self.idleLifetime }
            sessions[Self.digest(cookie)] = Session(csrf: csrf, lastUsed: now)
            while sessions.count > Self.capacity, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                sessions[oldest.key] = nil
            }
            persist(sessions)
        }
        return (cookie, csrf)
    }

    /// The session's CSRF token, when `cookie` names a live session (and marks it used).
    func csrf(for cookie: String?, now: Int64 = WallClock.now()) -> String? {
        guard let cookie, cookie.utf8.count <= 128 else { return nil }
        let key = Self.digest(cookie)
        return sessions.withLock { sessions in
            guard var session = sessions[key] else { return nil }
            guard now - session.lastUsed < Self.idleLifetime else {
                sessions[key] = nil
                return nil
            }
            session.lastUsed = now
            sessions[key] = session
            return session.csrf
        }
    }

    func end(_ cookie: String?) {
        guard let cookie else { return }
        sessions.withLock { sessions in
            if sessions.removeValue(forKey: Self.digest(cookie)) != nil { persist(sessions) }
        }
    }

    var count: Int { sessions.withLock { $0.count } }

    /// Compares two secrets in time that does not depend on where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
