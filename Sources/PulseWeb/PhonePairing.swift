import Crypto
import FoundationEssentials
import PeerSync
import Synchronization

/// Adding a phone (issue 42, step two): the computer's page opens an invitation — a
/// single-use token, in the HTTPS link of the QR code, valid ``lifetime``; the phone opening
/// the link uses it up and becomes a *request*, which holds a waiting cookie and nothing
/// else until a person at the computer approves it ("Add this phone?"). Approval makes the
/// phone's session; the phone's next visit of `/pair` exchanges its waiting cookie for it
/// (once). Only digests of the token and the cookies are kept; everything here is in memory
/// (an agent restart ends open invitations and requests, never a paired phone).
final class PhonePairing: Sendable {
    static let lifetime: Int64 = 10 * 60_000
    /// Requests waiting for an answer at once (more: the oldest is dropped).
    static let capacity = 4

    struct Invitation: Sendable {
        let digest: Data
        let name: String
        let member: String?
        let expires: Int64
    }

    struct Request: Sendable {
        /// Its public name (what approve/decline take): 16 hex digits.
        let id: String
        let waiting: Data
        let name: String
        let member: String?
        let address: String
        let asked: Int64
        /// Four digits the phone's waiting page and the computer's question both show, so the
        /// person approves the phone in their hand, not whoever opened the link first (issue 51).
        let code: String
        var answer: Answer = .pending
    }

    /// A request's code: four random digits.
    static func newCode() -> String {
        let digits = String(UInt16.random(in: 0..<10_000))
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    enum Answer: Sendable, Equatable {
        case pending
        /// Approved: the session cookie to hand over at the phone's next visit.
        case approved(cookie: String)
        case declined
    }

    private struct State {
        var invitation: Invitation?
        var requests: [Request] = []
    }

    private let state = Mutex(State())

    /// A new invitation (replacing an open one): its token, for the link only.
    func invite(name: String, member: String?, now: Int64 = WallClock.now()) -> (token: String, expires: Int64) {
        let token = RandomToken.make()
        let expires = now + Self.lifetime
        state.withLock { $0.invitation = Invitation(digest: WebSessions.digest(token), name: name, member: member, expires: expires) }
        return (token, expires)
    }

    /// The open invitation's end (nil: none open).
    func invitationExpires(now: Int64 = WallClock.now()) -> Int64? {
        state.withLock { state in state.invitation.flatMap { $0.expires > now ? $0.expires : nil } }
    }

    /// Uses `token` up: a new request, and the waiting cookie to give the phone; nil when the
    /// token is not the open invitation's (wrong, used, expired).
    func redeem(_ token: String, address: String, now: Int64 = WallClock.now()) -> (request: Request, waiting: String)? {
        guard token.utf8.count <= 128 else { return nil }
        let digest = WebSessions.digest(token)
        return state.withLock { state -> (Request, String)? in
            guard let invitation = state.invitation, invitation.expires > now, WebSessions.same(digest, invitation.digest) else { return nil }
            state.invitation = nil
            let waiting = RandomToken.make()
            let waitingDigest = WebSessions.digest(waiting)
            let request = Request(
                id: WebSessions.id(ofDigest: waitingDigest), waiting: waitingDigest, name: invitation.name, member: invitation.member,
                address: address, asked: now, code: Self.newCode())
            state.requests.removeAll { now - $0.asked > Self.lifetime }
            state.requests.append(request)
            if state.requests.count > Self.capacity { state.requests.removeFirst(state.requests.count - Self.capacity) }
            return (request, waiting)
        }
    }

    /// Requests not yet answered, oldest first.
    func pending(now: Int64 = WallClock.now()) -> [Request] {
        state.withLock { state in
            state.requests.removeAll { now - $0.asked > Self.lifetime }
            return state.requests.filter { $0.answer == .pending }
        }
    }

    /// Answers request `id` (once): false when no pending request has that id.
    func settle(_ id: String, _ answer: Answer) -> Bool {
        state.withLock { state in
            guard answer != .pending, let index = state.requests.firstIndex(where: { $0.id == id && $0.answer == .pending }) else { return false }
            state.requests[index].answer = answer
            return true
        }
    }

    /// The request of the phone holding `waiting`, with its answer (an approval's cookie is
    /// handed out once: the request then ends), or nil when it holds none.
    func collect(_ waiting: String?, now: Int64 = WallClock.now()) -> Request? {
        guard let waiting, waiting.utf8.count <= 128 else { return nil }
        let digest = WebSessions.digest(waiting)
        return state.withLock { state -> Request? in
            state.requests.removeAll { now - $0.asked > Self.lifetime }
            guard let index = state.requests.firstIndex(where: { WebSessions.same($0.waiting, digest) }) else { return nil }
            let request = state.requests[index]
            if request.answer != .pending { state.requests.remove(at: index) }
            return request
        }
    }

    /// A token seen over plain HTTP is burnt: if it is the open invitation's, that ends.
    func burn(_ token: String) {
        guard token.utf8.count <= 128 else { return }
        let digest = WebSessions.digest(token)
        state.withLock { state in
            if let invitation = state.invitation, WebSessions.same(invitation.digest, digest) { state.invitation = nil }
        }
    }
}

extension WebSessions {
    /// Digests compared in time that does not depend on where they differ.
    static func same(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
