import Crypto
import FoundationEssentials
import NIOCore
import NIOSSL
import SwiftASN1
import X509
import PulseModel
import PulseProtocol
import PulseIdentity

/// TLS 1.3 contexts for sessions between household machines. Each side shows a
/// self-signed certificate made from its machine key; each requires the other's
/// (mutual TLS). Certificates are not judged by a CA: the verification callback
/// records the peer's key hash (its machine id), and membership is then proved inside
/// the encrypted session (``MembershipProof``), bound to both keys.
public struct PeerTLS: Sendable {
    package let serverContext: NIOSSLContext
    package let clientContext: NIOSSLContext
    public let localMachine: [UInt8]

    public init(identity: MachineIdentity) throws {
        let key = Certificate.PrivateKey(identity.privateKey)
        let name = try DistinguishedName { CommonName("house-pulse \(identity.shortID)") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: key.publicKey,
            notValidBefore: now.addingTimeInterval(-86_400), notValidAfter: now.addingTimeInterval(20 * 365 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions {}, issuerPrivateKey: key)
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let sslCertificate = try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
        let sslKey = try NIOSSLPrivateKey(bytes: Array(identity.privateKey.pemRepresentation.utf8), format: .pem)

        func configure(_ base: TLSConfiguration) -> TLSConfiguration {
            var configuration = base
            configuration.minimumTLSVersion = .tlsv13
            configuration.certificateVerification = .noHostnameVerification // requires the peer's certificate
            configuration.trustRoots = .certificates([])
            // On close, wait at most this long for the peer's close_notify (a frozen
            // peer would otherwise hold the session for NIOSSL's default 5 s).
            configuration.shutdownTimeout = .seconds(1)
            return configuration
        }
        serverContext = try NIOSSLContext(
            configuration: configure(
                .makeServerConfiguration(certificateChain: [.certificate(sslCertificate)], privateKey: .privateKey(sslKey))))
        var client = TLSConfiguration.makeClientConfiguration()
        client.certificateChain = [.certificate(sslCertificate)]
        client.privateKey = .privateKey(sslKey)
        clientContext = try NIOSSLContext(configuration: configure(client))
        localMachine = Array(SHA256.hash(data: identity.publicKey.derRepresentation))
    }

    /// A verification callback that accepts the certificate and reports the SHA-256 of
    /// its public key to `machine`.
    package static func recordingPeer(into machine: EventLoopPromise<[UInt8]>) -> NIOSSLCustomVerificationCallback {
        { certificates, result in
            guard let leaf = certificates.first, let spki = try? leaf.extractPublicKey().toSPKIBytes() else {
                machine.fail(TransportError.noPeerCertificate)
                result.succeed(.failed)
                return
            }
            machine.succeed(Array(SHA256.hash(data: spki)))
            result.succeed(.certificateVerified)
        }
    }
}

public enum TransportError: Error, CustomStringConvertible {
    case noPeerCertificate
    case closedBeforeHandshake
    case tooManyUnauthenticated

    public var description: String {
        switch self {
        case .noPeerCertificate: "the peer showed no usable certificate"
        case .closedBeforeHandshake: "the connection closed during the TLS handshake"
        case .tooManyUnauthenticated: "too many connections waiting for their handshake"
        }
    }
}
