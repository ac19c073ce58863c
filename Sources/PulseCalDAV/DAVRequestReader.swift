import PulseCalendar

/// A request's method, target, headers and body read into a ``DAVOperation``, or refused with
/// the status a client expects. Pure: the table tests hold it (`DAVRequestReaderTests`).
public enum DAVRequestReader {
    public static func read(_ request: DAVHTTPRequest) throws(DAVRefusal) -> DAVOperation {
        guard let target = DAVPath.target(request.path) else {
            throw DAVRefusal(404, "not_found", "no such resource")
        }
        let method = request.method.uppercased()
        switch method {
        case "OPTIONS":
            return .options(target)
        case "PROPFIND":
            return .propfind(target, depth: try depth(request, default: .infinity), props: try propfind(request.body))
        case "PROPPATCH":
            return .proppatch(target, names: try proppatch(request.body))
        case "REPORT":
            return .report(target, depth: try depth(request, default: .zero), try report(request.body))
        case "GET", "HEAD":
            guard request.body.isEmpty else { throw DAVRefusal(400, "unexpected_body", "\(method) with a body") }
            return .get(target, head: method == "HEAD")
        case "PUT":
            guard case .object = target else {
                throw DAVRefusal(405, "not_an_object", "only a to-do (NAME.ics in a collection) can be written")
            }
            let type = request.header("content-type").map { String($0.split(separator: ";").first ?? "").trimming(" \t").lowercased() }
            guard type == nil || type == "text/calendar" else {
                throw DAVRefusal(
                    415, "unsupported_media_type", "a to-do is text/calendar",
                    precondition: DAVName(DAVXML.caldav, "supported-calendar-data"))
            }
            let object: ICalComponent
            do {
                object = try ICalendar.parse(request.body)
            } catch {
                throw DAVRefusal(
                    400, "invalid_calendar_data", "the body is not an iCalendar object: \(error)",
                    precondition: DAVName(DAVXML.caldav, "valid-calendar-data"))
            }
            let ifNoneMatch = request.header("if-none-match").map { $0.trimming(" \t") }
            guard ifNoneMatch == nil || ifNoneMatch == "*" else {
                throw DAVRefusal(400, "bad_precondition", "If-None-Match on a PUT is * (create only)")
            }
            return .put(target, object: object, ifMatch: try ifMatch(request), ifNoneMatch: ifNoneMatch == "*")
        case "DELETE":
            return .delete(target, ifMatch: try ifMatch(request))
        case "MKCALENDAR", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "POST", "ACL":
            throw DAVRefusal(403, "not_allowed", "\(method) is not offered: the household's lists are made on its page")
        default:
            throw DAVRefusal(405, "method_not_allowed", "\(method.prefix(20)) is not a method here")
        }
    }

    /// `Depth`: 0, 1 or infinity; PROPFIND's infinity is refused (RFC 4918 §9.1: the finite-depth
    /// precondition), so a client never makes us walk everything at once.
    static func depth(_ request: DAVHTTPRequest, default fallback: DAVDepth) throws(DAVRefusal) -> DAVDepth {
        let depth: DAVDepth
        switch request.header("depth")?.trimming(" \t").lowercased() {
        case nil: depth = fallback
        case "0": depth = .zero
        case "1": depth = .one
        case "infinity": depth = .infinity
        case let other?: throw DAVRefusal(400, "bad_depth", "Depth: \(other.prefix(20))")
        }
        if depth == .infinity && request.method.uppercased() == "PROPFIND" {
            throw DAVRefusal(403, "finite_depth", "Depth: infinity is not offered", precondition: DAVName(DAVXML.dav, "propfind-finite-depth"))
        }
        return depth
    }

    /// One ETag, quoted, or `*` (RFC 9110 §13.1.1: the resource exists, whatever its ETag; what
    /// the caldav library sends for an update of an object it holds no ETag of, as Home
    /// Assistant's tick does after a PUT answered without one).
    static func ifMatch(_ request: DAVHTTPRequest) throws(DAVRefusal) -> String? {
        guard let value = request.header("if-match")?.trimming(" \t") else { return nil }
        if value == "*" { return value }
        guard value.count >= 2, value.hasPrefix("\"") || value.hasPrefix("W/\""), value.hasSuffix("\""), !value.contains(",") else {
            throw DAVRefusal(400, "bad_precondition", "If-Match names one ETag, quoted, or *")
        }
        return value
    }

    static func xml(_ body: [UInt8]) throws(DAVRefusal) -> DAVElement {
        do {
            return try DAVXML.parse(body)
        } catch {
            throw DAVRefusal(error.code == .tooLarge ? 413 : 400, "bad_xml", "the body: \(error)")
        }
    }

    static func props(in element: DAVElement) throws(DAVRefusal) -> DAVProps {
        if element.child(DAVXML.dav, "allprop") != nil { return .all }
        if element.child(DAVXML.dav, "propname") != nil { return .names }
        guard let prop = element.child(DAVXML.dav, "prop") else { return .all }
        return .some(prop.children.map { DAVName($0.namespace, $0.name) })
    }

    static func propfind(_ body: [UInt8]) throws(DAVRefusal) -> DAVProps {
        guard !body.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }) else { return .all }
        let root = try xml(body)
        guard root.namespace == DAVXML.dav, root.name == "propfind" else {
            throw DAVRefusal(400, "bad_xml", "PROPFIND's body is a DAV:propfind")
        }
        return try props(in: root)
    }

    static func proppatch(_ body: [UInt8]) throws(DAVRefusal) -> [DAVName] {
        let root = try xml(body)
        guard root.namespace == DAVXML.dav, root.name == "propertyupdate" else {
            throw DAVRefusal(400, "bad_xml", "PROPPATCH's body is a DAV:propertyupdate")
        }
        return root.children.filter { $0.namespace == DAVXML.dav && ($0.name == "set" || $0.name == "remove") }
            .flatMap { $0.children(DAVXML.dav, "prop") }.flatMap(\.children).map { DAVName($0.namespace, $0.name) }
    }

    static func report(_ body: [UInt8]) throws(DAVRefusal) -> DAVReport {
        let root = try xml(body)
        switch (root.namespace, root.name) {
        case (DAVXML.caldav, "calendar-query"):
            guard let filter = root.child(DAVXML.caldav, "filter") else {
                throw DAVRefusal(400, "bad_xml", "a calendar-query without its filter")
            }
            return .query(props: try props(in: root), filter: try DAVFilter.read(filter))
        case (DAVXML.caldav, "calendar-multiget"):
            let hrefs = root.children(DAVXML.dav, "href").map { $0.text.trimming(" \t\n") }
            guard !hrefs.isEmpty, hrefs.count <= 1000 else {
                throw DAVRefusal(hrefs.isEmpty ? 400 : 413, "bad_xml", "a calendar-multiget names 1 to 1 000 hrefs")
            }
            return .multiget(props: try props(in: root), hrefs: hrefs)
        case (DAVXML.dav, "sync-collection"):
            let token = root.child(DAVXML.dav, "sync-token")?.text.trimming(" \t\n")
            let level = root.child(DAVXML.dav, "sync-level")?.text.trimming(" \t\n")
            guard level == nil || level == "1" else {
                throw DAVRefusal(403, "sync_level", "only sync-level 1: a collection holds no collections")
            }
            var limit: Int?
            if let nresults = root.child(DAVXML.dav, "limit")?.child(DAVXML.dav, "nresults") {
                guard let n = Int(nresults.text.trimming(" \t\n")), n > 0 else {
                    throw DAVRefusal(400, "bad_xml", "limit's nresults is a positive number")
                }
                limit = n
            }
            return .sync(props: try props(in: root), token: token?.isEmpty == false ? token : nil, limit: limit)
        default:
            throw DAVRefusal(
                403, "supported_report", "the report {\(root.namespace.prefix(60))}\(root.name.prefix(40))",
                precondition: DAVName(DAVXML.dav, "supported-report"))
        }
    }
}

extension String {
    func trimming(_ set: String) -> String {
        let characters = Set(set)
        return String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}
