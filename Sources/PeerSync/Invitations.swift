import FoundationEssentials
import Synchronization
import PulseProtocol

/// The agent's open invitation (at most one: a new `invite` replaces it), in memory only.
/// Sessions ask it at each pairing attempt (``PairingInvitation`` holds the rules).
final class InvitationBook: Sendable {
    private let open = Mutex<PairingInvitation?>(nil)

    /// Opens a new invitation for `memberID`, valid for `lifetime` milliseconds.
    func open(memberID: String?, lifetime: Int64) -> PairingInvitation {
        let invitation = PairingInvitation(code: PairingCode.generate(), memberID: memberID, expires: WallClock.now() + lifetime)
        open.withLock { $0 = invitation }
        return invitation
    }

    /// One attempt begins: the invitation to try, or why not.
    func beginAttempt() -> Result<PairingInvitation, PairingInvitation.Refusal> {
        open.withLock { invitation in
            guard var current = invitation else { return .failure(.none) }
            if let refusal = current.beginAttempt(now: WallClock.now()) { return .failure(refusal) }
            invitation = current
            return .success(current)
        }
    }

    /// The attempt with `code` proved it: the invitation is spent.
    func succeed(code: String) {
        open.withLock { invitation in
            guard var current = invitation, current.code == code else { return }
            current.succeed()
            invitation = current
        }
    }

    /// For status: the open invitation, if it can still be used.
    func current() -> PairingInvitation? {
        open.withLock { invitation in
            guard let current = invitation, !current.used, current.attemptsLeft > 0, current.expires > WallClock.now() else { return nil }
            return current
        }
    }
}
