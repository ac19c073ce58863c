/// `host:port`, as given with `--peer`.
public struct PeerAddress: Sendable, Hashable, CustomStringConvertible, Codable {
    public let host: String
    public let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port` or `[v6]:port`.
    public init?(_ text: String) {
        let trimmed = text.trimmed
        let host: Substring, portText: Substring
        if trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") {
            host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = trimmed.lastIndex(of: ":") else { return nil }
            host = trimmed[..<colon]
            portText = trimmed[trimmed.index(after: colon)...]
        }
        guard !host.isEmpty, host.count <= 253, !host.contains(where: { $0.isWhitespace }),
            let port = Int(portText), (1...65535).contains(port)
        else { return nil }
        self.host = String(host)
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
