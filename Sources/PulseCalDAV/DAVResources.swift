import PulseCalendar

/// What the service knows of a resource when it answers a PROPFIND or a REPORT: enough to
/// say each property a client asks for. Pure: the service reads the household into these.
public enum DAVResource: Equatable, Sendable {
    /// `/dav/`: it says who the signed-in member is.
    case root(principal: String)
    /// `/dav/MEMBER/`
    case principal(member: String, name: String)
    /// `/dav/MEMBER/lists/`
    case home(member: String)
    /// A to-do collection: its id, its name in the reader's language, and its sync token.
    case collection(member: String, id: String, name: String, token: String)
    /// A to-do: where it is, its ETag (quoted), and its text.
    case object(member: String, collection: String, name: String, etag: String, text: String)

    public var target: DAVTarget {
        switch self {
        case .root: .root
        case let .principal(member, _): .principal(user: member)
        case let .home(member): .home(user: member)
        case let .collection(member, id, _, _): .collection(user: member, collection: id)
        case let .object(member, collection, name, _, _): .object(user: member, collection: collection, name: name)
        }
    }
}

/// The properties the service answers, each by its name (RFC 4918, 4791, 5397, 6578, 6638,
/// and Apple's `getctag`, which older clients still ask for).
public enum DAVProperties {
    static let dav = DAVXML.dav, caldav = DAVXML.caldav
    static let calendarServer = "http://calendarserver.org/ns/"

    /// What `allprop` returns: the live properties of RFC 4918 a client can use (RFC 4918 §9.1
    /// lets `allprop` leave out the others; `calendar-data` only when asked for by name).
    static let all: [DAVName] = [
        DAVName(dav, "resourcetype"), DAVName(dav, "displayname"), DAVName(dav, "getetag"), DAVName(dav, "getcontenttype"),
    ]

    /// Each property of `names` that `resource` has, with its value; the others are not found.
    public static func values(of resource: DAVResource, _ props: DAVProps) -> (found: [DAVElement], missing: [DAVName]) {
        let names: [DAVName]
        switch props {
        case .all: names = all
        case .names: return (known(resource).map { DAVElement($0.namespace, $0.name) }, [])
        case let .some(asked): names = asked
        }
        var found: [DAVElement] = []
        var missing: [DAVName] = []
        for name in names {
            if let value = value(name, of: resource) { found.append(value) } else if props != .all { missing.append(name) }
        }
        return (found, missing)
    }

    static func known(_ resource: DAVResource) -> [DAVName] {
        let names: [DAVName] = [
            DAVName(dav, "resourcetype"), DAVName(dav, "displayname"), DAVName(dav, "current-user-principal"), DAVName(dav, "principal-URL"),
            DAVName(caldav, "calendar-home-set"), DAVName(caldav, "supported-calendar-component-set"), DAVName(dav, "supported-report-set"),
            DAVName(dav, "sync-token"), DAVName(calendarServer, "getctag"), DAVName(dav, "getetag"), DAVName(dav, "getcontenttype"),
            DAVName(caldav, "calendar-data"), DAVName(dav, "current-user-privilege-set"), DAVName(dav, "owner"),
        ]
        return names.filter { value($0, of: resource) != nil }
    }

    static func href(_ target: DAVTarget) -> DAVElement { DAVElement(dav, "href", text: target.href) }

    static func value(_ name: DAVName, of resource: DAVResource) -> DAVElement? {
        func element(children: [DAVElement] = [], text: String = "") -> DAVElement {
            DAVElement(name.namespace, name.name, children: children, text: text)
        }
        let member: String? =
            switch resource {
            case let .root(principal): principal
            case let .principal(member, _), let .home(member), let .collection(member, _, _, _), let .object(member, _, _, _, _): member
            }
        switch (name.namespace, name.name, resource) {
        case (dav, "resourcetype", .object):
            return element()
        case (dav, "resourcetype", .principal):
            return element(children: [DAVElement(dav, "principal"), DAVElement(dav, "collection")])
        case (dav, "resourcetype", .collection):
            return element(children: [DAVElement(dav, "collection"), DAVElement(caldav, "calendar")])
        case (dav, "resourcetype", _):
            return element(children: [DAVElement(dav, "collection")])
        case (dav, "displayname", let .principal(_, title)), (dav, "displayname", let .collection(_, _, title, _)):
            return element(text: title)
        case (dav, "current-user-principal", _), (dav, "principal-URL", .principal), (dav, "owner", .collection):
            return member.map { element(children: [href(.principal(user: $0))]) }
        case (caldav, "calendar-home-set", .principal), (caldav, "calendar-home-set", .root):
            return member.map { element(children: [href(.home(user: $0))]) }
        case (caldav, "supported-calendar-component-set", .collection):
            return element(children: [DAVElement(caldav, "comp", attributes: [DAVAttribute("", "name", "VTODO")])])
        case (dav, "supported-report-set", .collection):
            let reports = [DAVElement(caldav, "calendar-query"), DAVElement(caldav, "calendar-multiget"), DAVElement(dav, "sync-collection")]
            return element(children: reports.map { DAVElement(dav, "supported-report", children: [DAVElement(dav, "report", children: [$0])]) })
        case (dav, "sync-token", let .collection(_, _, _, token)), (calendarServer, "getctag", let .collection(_, _, _, token)):
            return element(text: token)
        case (dav, "getetag", let .object(_, _, _, etag, _)):
            return element(text: etag)
        case (dav, "getcontenttype", .object):
            return element(text: "text/calendar; charset=utf-8; component=VTODO")
        case (caldav, "calendar-data", let .object(_, _, _, _, text)):
            return element(text: text)
        case (dav, "current-user-privilege-set", .collection), (dav, "current-user-privilege-set", .object):
            let privileges = ["read", "write", "write-content", "bind", "unbind", "read-current-user-privilege-set"]
            return element(children: privileges.map { DAVElement(dav, "privilege", children: [DAVElement(dav, $0)]) })
        case (dav, "current-user-privilege-set", _):
            return element(children: [DAVElement(dav, "privilege", children: [DAVElement(dav, "read")])])
        default:
            return nil
        }
    }
}

/// A `207 Multi-Status` body (RFC 4918 §13).
public struct DAVMultistatus: Sendable {
    public private(set) var responses: [DAVElement] = []
    /// RFC 6578: the collection's token after the changes answered.
    public var syncToken: String?

    public init() {}

    /// A resource and its properties: those found with 200, those not with 404.
    public mutating func add(_ resource: DAVResource, _ props: DAVProps) {
        let (found, missing) = DAVProperties.values(of: resource, props)
        var stats: [DAVElement] = []
        if !found.isEmpty || missing.isEmpty { stats.append(Self.propstat(found, status: 200)) }
        if !missing.isEmpty { stats.append(Self.propstat(missing.map { DAVElement($0.namespace, $0.name) }, status: 404)) }
        responses.append(DAVElement(DAVXML.dav, "response", children: [DAVProperties.href(resource.target)] + stats))
    }

    /// An href with a status of its own (a multiget's missing object, a sync's removed one).
    public mutating func add(href: String, status: Int) {
        responses.append(
            DAVElement(DAVXML.dav, "response", children: [DAVElement(DAVXML.dav, "href", text: href), Self.status(status)]))
    }

    static func propstat(_ props: [DAVElement], status: Int) -> DAVElement {
        DAVElement(DAVXML.dav, "propstat", children: [DAVElement(DAVXML.dav, "prop", children: props), Self.status(status)])
    }

    static func status(_ code: Int) -> DAVElement {
        let reason = [200: "OK", 404: "Not Found", 403: "Forbidden", 507: "Insufficient Storage"][code] ?? "Status"
        return DAVElement(DAVXML.dav, "status", text: "HTTP/1.1 \(code) \(reason)")
    }

    public var document: String {
        var children = responses
        if let syncToken { children.append(DAVElement(DAVXML.dav, "sync-token", text: syncToken)) }
        return DAVXML.serialize(DAVElement(DAVXML.dav, "multistatus", children: children))
    }
}
