#if canImport(Glibc)
import Glibc
#endif

/// Which user holds the other end of a TCP connection made on this computer (a loopback
/// client of ours): the kernel's table of sockets, `/proc/net/tcp` and `/proc/net/tcp6`, names
/// each socket's owner. A sign-in link is then good only from the agent's own user's browser
/// (another account on the computer that saw the link, e.g. on a command line, gets nothing).
public enum SocketOwner {
    /// The uid owning the socket at `client` connected to `server` (both as this computer sees
    /// them: an address and a port), or nil when the tables name none.
    public static func uid(client: (address: String, port: Int), server: (address: String, port: Int)) -> UInt32? {
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = read(table) else { continue }
            if let uid = uid(in: text, client: client, server: server) { return uid }
        }
        return nil
    }

    /// The owner named in one table's text: the row whose local end is `client` and remote end
    /// is `server`.
    public static func uid(in table: String, client: (address: String, port: Int), server: (address: String, port: Int)) -> UInt32? {
        let forms = (procForms(client.address), procForms(server.address))
        guard !forms.0.isEmpty, !forms.1.isEmpty else { return nil }
        let local = Set(forms.0.map { "\($0):\(hex(client.port, width: 4))" })
        let remote = Set(forms.1.map { "\($0):\(hex(server.port, width: 4))" })
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
            // Only an open connection's row with its socket (inode): one closed a moment ago
            // lingers in TIME_WAIT or FIN_WAIT2 as uid 0, inode 0, and must not count as root's.
            guard fields.count > 9, local.contains(String(fields[1])), remote.contains(String(fields[2])), fields[3] == "01",
                fields[9] != "0"
            else { continue }
            return UInt32(fields[7])
        }
        return nil
    }

    /// An address as the tables print it: its bytes in 32-bit words, each in this machine's
    /// byte order, in upper-case hex; an IPv4 address also as IPv6 maps it (a dual-stack socket).
    static func procForms(_ address: String) -> [String] {
        var four = in_addr()
        if inet_pton(AF_INET, address, &four) == 1 {
            let bytes = withUnsafeBytes(of: four) { Array($0) }
            return [words(bytes), words([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + bytes)]
        }
        var six = in6_addr()
        guard inet_pton(AF_INET6, address, &six) == 1 else { return [] }
        let bytes = withUnsafeBytes(of: six) { Array($0) }
        // An IPv4 address as IPv6 maps it (::ffff:a.b.c.d) is also its plain IPv4 self.
        let mapped = bytes.prefix(12).elementsEqual([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF])
        return [words(bytes)] + (mapped ? [words(Array(bytes.suffix(4)))] : [])
    }

    private static func words(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { raw in
            stride(from: 0, to: raw.count, by: 4).map { hex(Int(raw.loadUnaligned(fromByteOffset: $0, as: UInt32.self)), width: 8) }.joined()
        }
    }

    private static func hex(_ value: Int, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 64 << 20 {
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count > 0 { bytes += chunk[0..<count] } else if count < 0 && errno == EINTR { continue } else { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
