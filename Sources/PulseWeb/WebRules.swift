import FoundationEssentials

/// Where the web page listens: loopback only (docs/SECURITY.md, "The web page").
public struct WebAddress: Sendable, Equatable, CustomStringConvertible {
    public static let defaultPort = 47654
    public static let `default` = WebAddress(host: "127.0.0.1", port: defaultPort)

    /// An IP literal of this machine's loopback (`localhost` is read as 127.0.0.1).
    public let host: String
    public let port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The same host on `port` (the port a `:0` address was given).
    public func on(port: Int) -> WebAddress { WebAddress(host: host, port: port) }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `--web`'s value: `HOST:PORT` on loopback (`127.0.0.1:47654`, `[::1]:8080`,
    /// `localhost:0` for any free port), or `off` (nil).
    public static func parse(_ text: String) -> Result<WebAddress?, WebAddressError> {
        if text.lowercased() == "off" { return .success(nil) }
        guard let colon = text.lastIndex(of: ":") else { return .failure(.notHostPort(text)) }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port), !host.isEmpty else {
            return .failure(.notHostPort(text))
        }
        if host.lowercased() == "localhost" { host = "127.0.0.1" }
        guard isLoopback(host) else { return .failure(.notLoopback(host)) }
        return .success(WebAddress(host: host, port: port))
    }

    /// 127.0.0.0/8 written as four decimal octets, or ::1.
    static func isLoopback(_ host: String) -> Bool {
        if host == "::1" || host.lowercased() == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { $0.count <= 3 && !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) && Int($0)! <= 255 }
    }
}

public enum WebAddressError: Error, Equatable, CustomStringConvertible {
    case notHostPort(String)
    case notLoopback(String)
    public var description: String {
        switch self {
        case let .notHostPort(text):
            "--web takes HOST:PORT on this machine, like 127.0.0.1:\(WebAddress.defaultPort), or off (not \(text.debugDescription))"
        case let .notLoopback(host):
            "--web serves this machine only: \(host.debugDescription) is not a loopback address (use 127.0.0.1, ::1 or localhost)"
        }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

/// The checks every request passes, as pure functions (table-tested without sockets).
enum WebRules {
    /// The `Host` values a browser on this machine sends for the page bound at `host:port`.
    /// Anything else — a DNS name that resolves here (DNS rebinding), a LAN address — is refused.
    static func allowedHosts(host: String, port: Int) -> Set<String> {
        var names: Set<String> = ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
        names.insert(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        return names
    }

    static func hostAllowed(_ header: String?, host: String, port: Int) -> Bool {
        guard let header else { return false }
        return allowedHosts(host: host, port: port).contains(header.lowercased())
    }

    /// A state-changing request must come from the page itself: its `Origin` is this
    /// page's (browsers send it on every POST; a missing one is refused too).
    static func originAllowed(_ header: String?, host: String, port: Int) -> Bool {
        guard let header, header.lowercased().hasPrefix("http://") else { return false }
        return allowedHosts(host: host, port: port).contains(String(header.lowercased().dropFirst("http://".count)))
    }

    /// The credential of `Authorization: Bearer …` (nil: none, or another scheme).
    static func bearer(_ header: String?) -> String? {
        guard let header, header.utf8.count <= 300 else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let value = String(parts[1].trimmingSpaces)
        return value.isEmpty ? nil : value
    }

    /// `Cookie: a=1; b=2` → the value of `name` (the first, as browsers send the most specific first).
    static func cookie(_ name: String, in headers: [String]) -> String? {
        for header in headers {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingSpaces == name { return String(parts[1].trimmingSpaces) }
            }
        }
        return nil
    }

    /// `/api/call/shop.add?x=1` → path `/api/call/shop.add`, query `["x": "1"]` (percent-decoded).
    static func split(uri: String) -> (path: String, query: [String: String]) {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let key = percentDecoded(kv[0]) else { continue }
                query[key] = kv.count == 2 ? percentDecoded(kv[1]) : ""
            }
        }
        return (String(parts[0]), query)
    }

    /// Whether `uri`'s query has a pair of key `key` as written (its value decoded or not).
    static func names(_ key: String, inQueryOf uri: String) -> Bool {
        uri.split(separator: "?", maxSplits: 1).dropFirst().first?.split(separator: "&").contains { $0 == key || $0.hasPrefix(key + "=") } ?? false
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Sent with every response: no script but the page's own files, no framing, no
    /// sniffing, no referrer (the login link carries a token), nothing shared cross-origin.
    /// The same headers, the page allowed to connect to `origins` too (the phone app: the
    /// household's other agents, for when its own does not answer). An origin that is not
    /// plainly `https://host:port` (a replicated row says it) is left out.
    static func securityHeaders(connectingTo origins: [String]) -> [(String, String)] {
        let allowed = connectable(origins)
        guard !allowed.isEmpty else { return securityHeaders }
        return securityHeaders.map { name, value in
            name == "Content-Security-Policy"
                ? (name, value.replacing("connect-src 'self'", with: "connect-src 'self' " + allowed.joined(separator: " "))) : (name, value)
        }
    }

    /// The origins of `origins` that are plainly `https://host:port` (letters, digits, `.-:[]`):
    /// safe in a header and in HTML.
    static func connectable(_ origins: [String]) -> [String] {
        origins.filter { origin in
            origin.hasPrefix("https://") && origin.utf8.count <= 200
                && origin.dropFirst("https://".count).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) }
        }
    }

    static let securityHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                + "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        ),
        ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
