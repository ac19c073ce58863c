import CNIOBoringSSL
import PulseProtocol

/// SPAKE2 (draft-irtf-cfrg-spake2-02, edwards25519) from the BoringSSL that swift-nio-ssl
/// vendors. Unsupported API of a pinned dependency (docs/SECURITY.md): `Spake2Tests` check
/// that it still behaves (same password → same key, different → different).
///
/// Owns its C context; one exchange per instance, on one thread at a time (not Sendable).
public final class Spake2 {
    public enum Role: Sendable { case alice, bob }
    public static let messageSize = 32
    public static let keySize = 64

    private let context: OpaquePointer
    private var generated = false

    /// `myName`/`theirName` are bound into the exchange (we pass the two machine ids as
    /// TLS established them), so a key agreed with a relay never matches.
    public init?(role: Role, myName: [UInt8], theirName: [UInt8]) {
        guard
            let context = SPAKE2_CTX_new(
                role == .alice ? spake2_role_alice : spake2_role_bob,
                myName, myName.count, theirName, theirName.count)
        else { return nil }
        self.context = context
    }

    deinit { SPAKE2_CTX_free(context) }

    /// This side's message for `password`; once per instance.
    public func message(password: [UInt8]) -> [UInt8]? {
        guard !generated else { return nil }
        generated = true
        var out = [UInt8](repeating: 0, count: Self.messageSize)
        var length = 0
        guard SPAKE2_generate_msg(context, &out, &length, out.count, password, password.count) == 1,
            length == Self.messageSize
        else { return nil }
        return out
    }

    /// The shared key from the peer's message (nil: malformed message, or called before `message`).
    public func key(peerMessage: [UInt8]) -> [UInt8]? {
        guard generated, peerMessage.count == Self.messageSize else { return nil }
        var key = [UInt8](repeating: 0, count: Self.keySize)
        var length = 0
        guard SPAKE2_process_msg(context, &key, &length, key.count, peerMessage, peerMessage.count) == 1,
            length == Self.keySize
        else { return nil }
        return key
    }
}

extension Spake2: PasswordKeyExchange {}
