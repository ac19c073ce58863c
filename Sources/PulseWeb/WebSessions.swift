import Crypto
import FoundationEssentials
import Synchronization

/// The browsers logged in to this page: a session cookie (HttpOnly, SameSite=Strict) and
/// its CSRF token, both 32 random bytes. Kept in memory only — after the agent restarts,
/// `pulse-peer open` logs in again — as SHA-256 digests of the cookie; at most
/// ``capacity`` at once (the least recently used is dropped).
final class WebSessions: Sendable {
    static let capacity = 32
    /// A session unused this long ends (milliseconds: 30 days).
    static let idleLifetime: Int64 = 30 * 86_400_000

    private struct Session {
        let csrf: String
        var lastUsed: Int64
    }

    private let sessions = Mutex<[Data: Session]>([:])

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func random() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return String(bytes.base64EncodedString().compactMap { c -> Character? in
            switch c { case "+": "-"; case "/": "_"; case "=": nil; default: c }
        })
    }

    private static func digest(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }

    /// A new session: the cookie's value and the CSRF token the page sends back.
    func create(now: Int64 = WebSessions.now()) -> (cookie: String, csrf: String) {
        let cookie = Self.random()
        let csrf = Self.random()
        sessions.withLock { sessions in
            sessions = sessions.filter { now - $0.value.lastUsed < Self.idleLifetime }
            sessions[Self.digest(cookie)] = Session(csrf: csrf, lastUsed: now)
            while sessions.count > Self.capacity, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                sessions[oldest.key] = nil
            }
        }
        return (cookie, csrf)
    }

    /// The session's CSRF token, when `cookie` names a live session (and marks it used).
    func csrf(for cookie: String?, now: Int64 = WebSessions.now()) -> String? {
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
        _ = sessions.withLock { $0.removeValue(forKey: Self.digest(cookie)) }
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
