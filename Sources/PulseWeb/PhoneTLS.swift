import Crypto
import FoundationEssentials
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PulseCA
import Synchronization
import X509

#if canImport(Glibc)
import Glibc
#endif

/// What the phones' listener shows a phone's browser (decision 0014): a 7-day leaf of this
/// agent's intermediate for this computer's `.local` name and its current home-network
/// addresses, made again when they change (looked at, at most every ``recheck``, when a
/// connection comes) and a day before it ends.
final class PhoneTLS: Sendable {
    /// How often a new connection makes us look at the addresses again.
    static let defaultRecheck = Duration.seconds(5)
    let recheck: Duration
    /// A leaf is made again once it is this old (it is valid for 7 days).
    static let renewAfter: TimeInterval = 86_400

    private struct Current {
        var names: [String]
        var addresses: [String]
        var context: NIOSSLContext
        var made: Date
        var checked: ContinuousClock.Instant
    }

    let certificates: AgentCertificates
    private let current: Mutex<Current>
    /// Where the names and addresses come from (the machine's, unless a test says).
    private let look: @Sendable () -> (names: [String], addresses: [String])

    init(
        certificates: AgentCertificates, look: @escaping @Sendable () -> (names: [String], addresses: [String]) = PhoneTLS.thisMachine,
        recheck: Duration = PhoneTLS.defaultRecheck
    ) throws {
        self.certificates = certificates
        self.look = look
        self.recheck = recheck
        let (names, addresses) = look()
        let now = Date()
        current = Mutex(
            Current(
                names: names, addresses: addresses, context: try Self.context(certificates, names: names, addresses: addresses, now: now),
                made: now, checked: .now))
    }

    /// The context for a new connection (a new leaf first when the addresses changed).
    func context() -> NIOSSLContext {
        current.withLock { current in
            let now = ContinuousClock.now
            guard now - current.checked >= recheck else { return current.context }
            current.checked = now
            let (names, addresses) = look()
            let date = Date()
            if Set(names) != Set(current.names) || Set(addresses) != Set(current.addresses)
                || date.timeIntervalSince(current.made) > Self.renewAfter,
                let context = try? Self.context(certificates, names: names, addresses: addresses, now: date)
            {
                current = Current(names: names, addresses: addresses, context: context, made: date, checked: now)
            }
            return current.context
        }
    }

    /// The names and addresses the leaf covers now.
    var covered: (names: [String], addresses: [String]) { current.withLock { ($0.names, $0.addresses) } }

    /// The `Host` values a phone's browser sends for them on `port`.
    func hosts(port: Int) -> Set<String> {
        let (names, addresses) = covered
        return Set(names.map { "\($0):\(port)" } + addresses.map { $0.contains(":") ? "[\($0)]:\(port)" : "\($0):\(port)" })
    }

    static func context(_ certificates: AgentCertificates, names: [String], addresses: [String], now: Date) throws -> NIOSSLContext {
        let (chain, key) = try certificates.leaf(names: names, addresses: addresses, now: now)
        let certificates = try chain.map { try NIOSSLCertificate(bytes: PhoneProfiles.der($0), format: .der) }
        let privateKey = try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["http/1.1"]
        configuration.shutdownTimeout = .seconds(1)
        return try NIOSSLContext(configuration: configuration)
    }

    /// This computer's `.local` name (its host name, as Avahi announces it) and its addresses
    /// the CA may vouch for.
    @Sendable static func thisMachine() -> (names: [String], addresses: [String]) {
        var buffer = [CChar](repeating: 0, count: 256)
        var names: [String] = []
        if gethostname(&buffer, buffer.count) == 0 {
            let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
            let first = host.split(separator: ".").first.map(String.init) ?? host
            if HouseholdCA.isPermitted(name: first + ".local") { names.append(first + ".local") }
        }
        let route = (try? String(contentsOfFile: "/proc/net/route", encoding: .utf8)).flatMap(defaultRouteInterface)
        return (names, addresses((try? System.enumerateDevices()) ?? [], first: route))
    }

    /// The addresses the CA may vouch for (private IPv4: the listener binds 0.0.0.0), those of
    /// `first` (the interface of the default route: the home network, most likely) first.
    static func addresses(_ devices: [NIONetworkDevice], first: String?) -> [String] {
        var seen: [(address: String, first: Bool)] = []
        for device in devices {
            guard let text = device.address?.ipAddress, let bytes = HouseholdCA.addressBytes(text), bytes.count == 4,
                HouseholdCA.isPermitted(address: bytes), !seen.contains(where: { $0.address == text })
            else { continue }
            seen.append((text, device.name == first))
        }
        return seen.filter(\.first).map(\.address) + seen.filter { !$0.first }.map(\.address)
    }

    /// `/proc/net/route`'s interface with destination 0.0.0.0 (nil: none).
    static func defaultRouteInterface(_ table: String) -> String? {
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count > 2, fields[1] == "00000000" { return String(fields[0]) }
        }
        return nil
    }
}

/// Whether a connection to the phones' port spoke TLS (set by ``TLSOrPlain`` before the
/// first request is read).
final class ConnectionKind: Sendable {
    private let tls = Atomic(false)
    var isTLS: Bool { tls.load(ordering: .acquiring) }
    func markTLS() { tls.store(true, ordering: .releasing) }
}

/// The first byte of a connection decides: a TLS handshake record (22) gets the TLS
/// handler in front of HTTP; anything else is plain HTTP, which serves only the household
/// CA's download and sends every other request to `https://` (PhoneSetupPages).
final class TLSOrPlain: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let tls: NIOSSLContext
    let kind: ConnectionKind
    private var decided = false

    init(tls: NIOSSLContext, kind: ConnectionKind) {
        self.tls = tls
        self.kind = kind
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else { return context.fireChannelRead(data) }
        let buffer = unwrapInboundIn(data)
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
        decided = true
        if first == 22 {
            kind.markTLS()
            do {
                try context.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls), position: .after(self))
            } catch {
                context.close(promise: nil)
                return
            }
        }
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
    }
}
