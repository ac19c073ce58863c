import Crypto
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

/// Errors reading or writing the machine's files; each says what to do.
public enum IdentityError: Error, CustomStringConvertible, Equatable {
    case unsafePermissions(String, mode: Int)
    case badKey(String, String)
    case io(String)

    public var description: String {
        switch self {
        case let .unsafePermissions(path, mode):
            "\(path) is readable by others (mode \(String(mode, radix: 8))); run `chmod 600 \(path)`"
        case let .badKey(path, reason): "cannot read the machine identity \(path): \(reason)"
        case let .io(message): message
        }
    }
}

/// The persistent identity of a machine: a P-256 key pair kept in the home directory
/// (`identity.pem`, PKCS#8 PEM, mode 0600). The machine id is the SHA-256 of the public
/// key's SubjectPublicKeyInfo, in hex: it cannot be claimed without the private key,
/// and it survives re-issuing certificates made from the same key.
public struct MachineIdentity: Sendable {
    public static let fileName = "identity.pem"

    public let privateKey: P256.Signing.PrivateKey
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }
    public let machineID: String

    public init(privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
        self.machineID = Self.machineID(of: privateKey.publicKey)
    }

    public static func machineID(of key: P256.Signing.PublicKey) -> String {
        Hex.string(SHA256.hash(data: key.derRepresentation))
    }

    /// The first 12 hex digits: enough to tell a family's machines apart on screen.
    public var shortID: String { String(machineID.prefix(12)) }

    /// Loads the identity from `directory`, creating it (0600, written atomically) when absent.
    public static func loadOrCreate(in directory: URL) throws -> MachineIdentity {
        let file = directory.appendingPathComponent(fileName)
        if FileManager.default.fileExists(atPath: file.path) {
            return try load(from: file)
        }
        let identity = MachineIdentity(privateKey: P256.Signing.PrivateKey())
        try FileSafety.writeAtomically(Data(identity.privateKey.pemRepresentation.utf8), to: file, mode: 0o600)
        return identity
    }

    /// The identity in `directory` when it holds one, else a new one kept in memory only
    /// (``save(in:)`` writes it once there is a reason to: a pairing that succeeded).
    public static func loadOrMake(in directory: URL) throws -> (identity: MachineIdentity, isNew: Bool) {
        let file = directory.appendingPathComponent(fileName)
        if FileManager.default.fileExists(atPath: file.path) { return (try load(from: file), false) }
        return (MachineIdentity(privateKey: P256.Signing.PrivateKey()), true)
    }

    /// Writes this identity into `directory` (0600, atomically).
    public func save(in directory: URL) throws {
        try FileSafety.writeAtomically(
            Data(privateKey.pemRepresentation.utf8), to: directory.appendingPathComponent(Self.fileName),
            mode: 0o600)
    }

    public static func load(from file: URL) throws -> MachineIdentity {
        // stat(2), not FileManager's attributes: their mode is not an `Int` here, and a cast
        // that fails silently would skip the check.
        var info = stat()
        guard stat(file.path, &info) == 0 else {
            throw IdentityError.io("cannot read \(file.path): \(String(cString: strerror(errno)))")
        }
        if info.st_mode & 0o077 != 0 {
            throw IdentityError.unsafePermissions(file.path, mode: Int(info.st_mode & 0o777))
        }
        let pem = try String(contentsOf: file, encoding: .utf8)
        do {
            return MachineIdentity(privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem))
        } catch {
            throw IdentityError.badKey(file.path, "\(error)")
        }
    }
}

package enum FileSafety {
    /// Writes `data` to a temporary file beside `url`, fsyncs it, renames it into place
    /// and fsyncs the directory: a crash leaves either the old file or the new one.
    package static func writeAtomically(_ data: Data, to url: URL, mode: mode_t) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        guard fd >= 0 else { throw IdentityError.io("cannot create \(temporary.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        fchmod(fd, mode)
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(fd) == 0 else {
            throw IdentityError.io("cannot write \(temporary.path): \(String(cString: strerror(errno)))")
        }
        try rename(temporary, to: url)
    }

    package static func rename(_ from: URL, to: URL) throws {
        guard Glibc.rename(from.path, to.path) == 0 else {
            throw IdentityError.io("cannot rename \(from.path) to \(to.path): \(String(cString: strerror(errno)))")
        }
        syncDirectory(to.deletingLastPathComponent())
    }

    package static func syncDirectory(_ directory: URL) {
        let fd = open(directory.path, O_RDONLY)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }
}
