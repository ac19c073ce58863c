import Crypto
import FoundationEssentials
import PulseModel

/// Proof that a machine holds the household secret, bound to the TLS session's two
/// identities: `HMAC-SHA256(secret, label ‖ role ‖ clientMachineID ‖ serverMachineID)`.
///
/// TLS 1.3 with client certificates proves each side holds the private key of the
/// certificate it showed; binding both certificates' key hashes into the proof means a
/// relay in the middle (who must show its own certificate to each side) can neither use
/// nor forward what it sees, and the role keeps a proof from being reflected back. The
/// secret is 32 random bytes: nothing here can be guessed or cracked offline.
public enum MembershipProof {
    public enum Role: String, Sendable { case client, server }
    package static let label = Array("house-pulse/1 membership".utf8)

    public static func compute(secret: SymmetricKey, role: Role, clientMachine: [UInt8], serverMachine: [UInt8]) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: secret)
        hmac.update(data: message(role: role, clientMachine: clientMachine, serverMachine: serverMachine))
        return Array(hmac.finalize())
    }

    /// Constant-time check.
    public static func verify(_ proof: [UInt8], secret: SymmetricKey, role: Role, clientMachine: [UInt8], serverMachine: [UInt8]) -> Bool {
        guard proof.count == WireLimits.proofBytes else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            proof, authenticating: message(role: role, clientMachine: clientMachine, serverMachine: serverMachine), using: secret)
    }

    private static func message(role: Role, clientMachine: [UInt8], serverMachine: [UInt8]) -> [UInt8] {
        label + [0] + Array(role.rawValue.utf8) + [0] + clientMachine + serverMachine
    }
}
