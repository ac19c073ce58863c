import PulseCalendar

/// One HTTP request as CalDAV sees it (no NIO types: tested without sockets).
public struct DAVHTTPRequest: Sendable {
    public var method: String
    /// The request target's path, still percent-encoded, without its query.
    public var path: String
    /// Names in lower case.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, path: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// Where a request points. The household's CalDAV space is `/dav/`: each user (an app
/// password's member) has a principal and a home of to-do collections.
public enum DAVTarget: Equatable, Hashable, Sendable {
    /// `/.well-known/caldav` (RFC 6764): answered by a redirect to `/dav/`.
    case wellKnown
    /// `/dav/`: where a client given the bare host asks who it is.
    case root
    /// `/dav/USER/`
    case principal(user: String)
    /// `/dav/USER/lists/`: the calendar home.
    case home(user: String)
    /// `/dav/USER/lists/COLLECTION/`
    case collection(user: String, collection: String)
    /// `/dav/USER/lists/COLLECTION/NAME.ics`
    case object(user: String, collection: String, name: String)

    public var user: String? {
        switch self {
        case .wellKnown, .root: nil
        case let .principal(user), let .home(user), let .collection(user, _), let .object(user, _, _): user
        }
    }

    /// The path as we write it in answers (each segment percent-encoded).
    public var href: String {
        switch self {
        case .wellKnown: "/.well-known/caldav"
        case .root: "/dav/"
        case let .principal(user): "/dav/\(DAVPath.encode(user))/"
        case let .home(user): "/dav/\(DAVPath.encode(user))/lists/"
        case let .collection(user, collection): "/dav/\(DAVPath.encode(user))/lists/\(DAVPath.encode(collection))/"
        case let .object(user, collection, name): "/dav/\(DAVPath.encode(user))/lists/\(DAVPath.encode(collection))/\(DAVPath.encode(name))"
        }
    }
}

public enum DAVPath {
    /// The target of a path or an href (a full URL's path part is taken), or nil when it is
    /// not one of ours: outside `/dav/`, a segment that does not decode to UTF-8, holds a
    /// slash or a control character, is `.` or `..`, or is longer than 255 bytes.
    public static func target(_ raw: String) -> DAVTarget? {
        var path = Substring(raw)
        if let scheme = path.firstRange(of: "://") {
            let rest = path[scheme.upperBound...]
            path = rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
        }
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
        if path == "/.well-known/caldav" || path == "/.well-known/caldav/" { return .wellKnown }
        guard path.hasPrefix("/dav/") else { return nil }
        let trailing = path.hasSuffix("/")
        var segments: [String] = []
        for raw in path.dropFirst(5).split(separator: "/", omittingEmptySubsequences: false).dropLast(trailing ? 1 : 0) {
            guard let segment = decode(raw) else { return nil }
            segments.append(segment)
        }
        switch (segments.count, trailing) {
        case (0, _): return .root
        case (1, _): return .principal(user: segments[0])
        case (2, _) where segments[1] == "lists": return .home(user: segments[0])
        case (3, _) where segments[1] == "lists": return .collection(user: segments[0], collection: segments[2])
        case (4, false) where segments[1] == "lists" && segments[3].hasSuffix(".ics") && segments[3].count > 4:
            return .object(user: segments[0], collection: segments[2], name: segments[3])
        default: return nil
        }
    }

    static func decode(_ segment: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(segment.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        guard !bytes.isEmpty, bytes.count <= 255, !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/") }),
            let text = String(validating: bytes, as: UTF8.self), text != ".", text != ".."
        else { return nil }
        return text
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A segment percent-encoded: RFC 3986's unreserved characters and a few safe ones stay.
    public static func encode(_ segment: String) -> String {
        var out = ""
        for byte in segment.utf8 {
            let scalar = Unicode.Scalar(byte)
            if byte < 0x80 && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-._~@+".unicodeScalars.contains(scalar)) {
                out.unicodeScalars.append(scalar)
            } else {
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 15)])
            }
        }
        return out
    }
}

/// A property's name: its namespace and local name.
public struct DAVName: Hashable, Sendable, CustomStringConvertible {
    public let namespace: String
    public let name: String
    public init(_ namespace: String, _ name: String) {
        self.namespace = namespace
        self.name = name
    }
    public var description: String { "{\(namespace)}\(name)" }
}

/// What a PROPFIND or REPORT asks of each resource.
public enum DAVProps: Equatable, Sendable {
    /// `<allprop/>`, or no body (RFC 4918 §9.1).
    case all
    /// `<propname/>`
    case names
    case some([DAVName])
}

public enum DAVDepth: Equatable, Sendable {
    case zero, one, infinity
}

public enum DAVReport: Equatable, Sendable {
    /// `calendar-query` (RFC 4791 §7.8).
    case query(props: DAVProps, filter: DAVFilter)
    /// `calendar-multiget` (§7.9): the hrefs asked for, in order.
    case multiget(props: DAVProps, hrefs: [String])
    /// `sync-collection` (RFC 6578): nil token for a first sync.
    case sync(props: DAVProps, token: String?, limit: Int?)
}

/// What a request asks, read and checked; what the server answers is the service's.
public enum DAVOperation: Equatable, Sendable {
    case options(DAVTarget)
    case propfind(DAVTarget, depth: DAVDepth, props: DAVProps)
    case proppatch(DAVTarget, names: [DAVName])
    case report(DAVTarget, depth: DAVDepth, DAVReport)
    /// GET, or HEAD with `head` (the same answer without its body).
    case get(DAVTarget, head: Bool)
    /// `ifMatch`: the ETag the client last saw (a stale one gets 412), or `*` (it must exist);
    /// `ifNoneMatch`: `*`, create only.
    case put(DAVTarget, object: ICalComponent, ifMatch: String?, ifNoneMatch: Bool)
    case delete(DAVTarget, ifMatch: String?)
}

/// A request refused before the household is asked: the HTTP status, a code for logs and
/// tests, and (for 403 and 409) the precondition element RFC 4791 names, if any.
public struct DAVRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let precondition: DAVName?
    public let detail: String

    public init(_ status: Int, _ code: String, _ detail: String, precondition: DAVName? = nil) {
        self.status = status
        self.code = code
        self.detail = detail
        self.precondition = precondition
    }

    public var description: String { "\(status) \(code): \(detail)" }
}
