import Testing
@testable import PulseCalDAV
@testable import PulseCalendar

/// CalDAV requests as the clients of issue 59 send them, read into operations; what we cannot
/// serve refused with the status a client expects.
@Suite struct DAVRequestReaderTests {
    @Test(arguments: [
        ("/.well-known/caldav", DAVTarget.wellKnown),
        ("/.well-known/caldav/", .wellKnown),
        ("/dav/", .root),
        ("/dav", nil),
        ("https://pulse.local:47655/dav/Anna/", .principal(user: "Anna")),
        ("/dav/Zo%C3%AB/lists/", .home(user: "Zoë")),
        ("/dav/Anna/lists/shopping/", .collection(user: "Anna", collection: "shopping")),
        ("/dav/Anna/lists/shopping", .collection(user: "Anna", collection: "shopping")),
        ("/dav/Anna/lists/shopping/6B29FC40-CA47.ics", .object(user: "Anna", collection: "shopping", name: "6B29FC40-CA47.ics")),
        ("/dav/Anna/lists/shopping/a%20b%2Bc.ics?x=1", .object(user: "Anna", collection: "shopping", name: "a b+c.ics")),
        ("/dav/Anna/lists/shopping/x.ics/", nil),
        ("/dav/Anna/lists/shopping/.ics", nil),
        ("/dav/Anna/other/", nil),
        ("/dav/Anna/lists/shopping/a/b.ics", nil),
        ("/dav/%2E%2E/lists/", nil),
        ("/dav/../lists/", nil),
        ("/dav/a%2Fb/", nil),
        ("/dav/a%00b/", nil),
        ("/dav/a%ZZ/", nil),
        ("/dav/a%FF/", nil),
        ("/dav//lists/", nil),
        ("/index.html", nil),
    ])
    func pathsAreOursOnlyWhenEverySegmentIsCleanText(path: String, target: DAVTarget?) {
        #expect(DAVPath.target(path) == target, "\(path)")
        if let target, target != .wellKnown { #expect(DAVPath.target(target.href) == target, "written as \(target.href)") }
    }

    static func request(_ method: String, _ path: String, _ headers: [(String, String)] = [], _ body: String = "") -> DAVHTTPRequest {
        DAVHTTPRequest(method: method, path: path, headers: headers.map { (name: $0.0, value: $0.1) }, body: Array(body.utf8))
    }

    @Test func thePrincipalsPropfindOfTheCaldavLibraryIsReadAtDepthZero() throws {
        let operation = try DAVRequestReader.read(Self.request("PROPFIND", "/dav/", [("depth", "0")], DAVXMLTests.principal))
        #expect(operation == .propfind(.root, depth: .zero, props: .some([DAVName(DAVXML.dav, "current-user-principal")])))
        #expect(
            try DAVRequestReader.read(Self.request("PROPFIND", "/dav/Anna/", [("depth", "1")])) == .propfind(.principal(user: "Anna"), depth: .one, props: .all)
        )
    }

    @Test func aQueryASyncAndAMultigetAreRead() throws {
        let query = try DAVRequestReader.read(Self.request("REPORT", "/dav/Anna/lists/shopping/", [("depth", "1")], DAVXMLTests.query))
        guard case let .report(target, depth, .query(props, filter)) = query else {
            Issue.record("read as \(query)")
            return
        }
        #expect(target == .collection(user: "Anna", collection: "shopping") && depth == .one)
        #expect(props == .some([DAVName(DAVXML.dav, "getetag"), DAVName(DAVXML.caldav, "calendar-data")]))
        #expect(filter.matches(Self.todo(["SUMMARY:Milk"])))
        #expect(!filter.matches(Self.todo(["SUMMARY:Milk", "COMPLETED:20261205T101010Z"])))

        let sync = try DAVRequestReader.read(Self.request("REPORT", "/dav/Anna/lists/shopping/", [], DAVXMLTests.sync))
        #expect(
            sync
                == .report(
                    .collection(user: "Anna", collection: "shopping"), depth: .zero,
                    .sync(props: .some([DAVName(DAVXML.dav, "getetag"), DAVName(DAVXML.dav, "getcontenttype")]), token: "https://h.local/sync/7", limit: nil)))

        let multiget = """
            <c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
              <d:prop><d:getetag/><c:calendar-data/></d:prop>
              <d:href>/dav/Anna/lists/shopping/a.ics</d:href>
              <d:href> /dav/Anna/lists/shopping/b.ics </d:href>
            </c:calendar-multiget>
            """
        guard case let .report(_, _, .multiget(_, hrefs)) = try DAVRequestReader.read(Self.request("REPORT", "/dav/Anna/lists/shopping/", [], multiget)) else {
            Issue.record("not a multiget")
            return
        }
        #expect(hrefs == ["/dav/Anna/lists/shopping/a.ics", "/dav/Anna/lists/shopping/b.ics"])
    }

    @Test func aPutWithItsPreconditionsIsReadAndItsObjectParsed() throws {
        let put = try DAVRequestReader.read(
            Self.request(
                "PUT", "/dav/Anna/lists/shopping/a1.ics", [("content-type", "text/calendar; charset=utf-8"), ("if-match", "\"e-7\"")],
                ICalendarTests.plain))
        guard case let .put(target, object, ifMatch, ifNoneMatch) = put else {
            Issue.record("read as \(put)")
            return
        }
        #expect(target == .object(user: "Anna", collection: "shopping", name: "a1.ics"))
        #expect(object.components.first?.first("UID")?.value == "a1")
        #expect(ifMatch == "\"e-7\"" && !ifNoneMatch)
        let create = try DAVRequestReader.read(Self.request("PUT", "/dav/Anna/lists/shopping/a1.ics", [("if-none-match", "*")], ICalendarTests.plain))
        guard case .put(_, _, nil, true) = create else {
            Issue.record("read as \(create)")
            return
        }
        #expect(
            try DAVRequestReader.read(Self.request("DELETE", "/dav/Anna/lists/shopping/a1.ics", [("if-match", "W/\"e-7\"")]))
                == .delete(.object(user: "Anna", collection: "shopping", name: "a1.ics"), ifMatch: "W/\"e-7\""))
    }

    static let refused: [(String, DAVHTTPRequest, Int, String)] = [
        ("a path outside", request("GET", "/etc/passwd"), 404, "not_found"),
        ("a path climbing out", request("PROPFIND", "/dav/%2e%2e/lists/", [("depth", "0")]), 404, "not_found"),
        ("PROPFIND everything at once", request("PROPFIND", "/dav/Anna/", [("depth", "infinity")]), 403, "finite_depth"),
        ("PROPFIND with no depth (infinity)", request("PROPFIND", "/dav/Anna/"), 403, "finite_depth"),
        ("a bad depth", request("PROPFIND", "/dav/Anna/", [("depth", "2")]), 400, "bad_depth"),
        ("a PUT on a collection", request("PUT", "/dav/Anna/lists/shopping/", [], ICalendarTests.plain), 405, "not_an_object"),
        ("a PUT of JSON", request("PUT", "/dav/Anna/lists/shopping/a.ics", [("content-type", "application/json")], "{}"), 415, "unsupported_media_type"),
        ("a PUT of a broken object", request("PUT", "/dav/Anna/lists/shopping/a.ics", [], "BEGIN:VCALENDAR\r\n"), 400, "invalid_calendar_data"),
        (
            "If-None-Match naming a tag", request("PUT", "/dav/Anna/lists/shopping/a.ics", [("if-none-match", "\"x\"")], ICalendarTests.plain), 400,
            "bad_precondition"
        ),
        ("If-Match unquoted", request("DELETE", "/dav/Anna/lists/shopping/a.ics", [("if-match", "x")]), 400, "bad_precondition"),
        ("If-Match naming two", request("DELETE", "/dav/Anna/lists/shopping/a.ics", [("if-match", "\"a\", \"b\"")]), 400, "bad_precondition"),
        ("MKCALENDAR", request("MKCALENDAR", "/dav/Anna/lists/new/"), 403, "not_allowed"),
        ("an unknown method", request("BREW", "/dav/"), 405, "method_not_allowed"),
        ("a GET with a body", request("GET", "/dav/Anna/lists/shopping/a.ics", [], "x"), 400, "unexpected_body"),
        (
            "an XXE in a PROPFIND",
            request("PROPFIND", "/dav/", [("depth", "0")], "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><propfind xmlns=\"DAV:\">&e;</propfind>"),
            400, "bad_xml"
        ),
        ("a body that is not a propfind", request("PROPFIND", "/dav/", [("depth", "0")], "<a/>"), 400, "bad_xml"),
        ("a report we do not offer", request("REPORT", "/dav/Anna/", [], "<d:expand-property xmlns:d=\"DAV:\"/>"), 403, "supported_report"),
        (
            "a query without a filter", request("REPORT", "/dav/Anna/lists/shopping/", [], "<c:calendar-query xmlns:c=\"urn:ietf:params:xml:ns:caldav\"/>"),
            400, "bad_xml"
        ),
        (
            "a filter of two roots",
            request(
                "REPORT", "/dav/Anna/lists/shopping/", [],
                "<c:calendar-query xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><c:filter><c:comp-filter name=\"A\"/><c:comp-filter name=\"B\"/></c:filter></c:calendar-query>"
            ),
            403, "supported_filter"
        ),
        (
            "a collation we do not know",
            request(
                "REPORT", "/dav/Anna/lists/shopping/", [],
                "<c:calendar-query xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><c:filter><c:comp-filter name=\"VCALENDAR\"><c:prop-filter name=\"X\"><c:text-match collation=\"i;unicode-casemap\">a</c:text-match></c:prop-filter></c:comp-filter></c:filter></c:calendar-query>"
            ),
            403, "supported_collation"
        ),
        (
            "a time range not in UTC",
            request(
                "REPORT", "/dav/Anna/lists/shopping/", [],
                "<c:calendar-query xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><c:filter><c:comp-filter name=\"VCALENDAR\"><c:time-range start=\"20261205T000000\"/></c:comp-filter></c:filter></c:calendar-query>"
            ),
            400, "bad_time_range"
        ),
        (
            "sync of depth infinity",
            request("REPORT", "/dav/Anna/lists/shopping/", [], "<sync-collection xmlns=\"DAV:\"><sync-level>infinite</sync-level></sync-collection>"), 403,
            "sync_level"
        ),
        (
            "a limit of nothing",
            request("REPORT", "/dav/Anna/lists/shopping/", [], "<sync-collection xmlns=\"DAV:\"><limit><nresults>0</nresults></limit></sync-collection>"), 400,
            "bad_xml"
        ),
        (
            "a multiget of nothing", request("REPORT", "/dav/Anna/lists/shopping/", [], "<c:calendar-multiget xmlns:c=\"urn:ietf:params:xml:ns:caldav\"/>"),
            400, "bad_xml"
        ),
        (
            "a multiget of 1 001",
            request(
                "REPORT", "/dav/Anna/lists/shopping/", [],
                "<c:calendar-multiget xmlns:c=\"urn:ietf:params:xml:ns:caldav\" xmlns:d=\"DAV:\">" + String(repeating: "<d:href>/x.ics</d:href>", count: 1001)
                    + "</c:calendar-multiget>"),
            413, "bad_xml"
        ),
    ]

    @Test(arguments: refused)
    func whatCannotBeServedIsRefusedWithTheStatusAClientExpects(what: String, request: DAVHTTPRequest, status: Int, code: String) {
        do {
            let operation = try DAVRequestReader.read(request)
            Issue.record("\(what): read as \(operation)")
        } catch {
            #expect(error.status == status && error.code == code, "\(what): \(error)")
        }
    }

    static func todo(_ lines: [String]) -> ICalComponent {
        let text = (["BEGIN:VCALENDAR", "VERSION:2.0", "BEGIN:VTODO", "UID:t"] + lines + ["END:VTODO", "END:VCALENDAR", ""]).joined(separator: "\r\n")
        return try! ICalendar.parse(Array(text.utf8))
    }

    static func filter(_ xml: String) -> DAVFilter {
        let root = try! DAVXML.parse(Array("<c:filter xmlns:c=\"urn:ietf:params:xml:ns:caldav\">\(xml)</c:filter>".utf8))
        return try! DAVFilter.read(root)
    }

    /// Each row: a filter's inside, a to-do's lines, whether it matches.
    static let filters: [(String, String, [String], Bool)] = [
        ("VTODOs", "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"/></c:comp-filter>", [], true),
        ("VEVENTs", "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VEVENT\"/></c:comp-filter>", [], false),
        ("no VEVENT", "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VEVENT\"><c:is-not-defined/></c:comp-filter></c:comp-filter>", [], true),
        (
            "STATUS not COMPLETED (Home Assistant)",
            "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"><c:prop-filter name=\"STATUS\"><c:text-match negate-condition=\"yes\">COMPLETED</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>",
            ["STATUS:NEEDS-ACTION"], true
        ),
        (
            "STATUS not COMPLETED, of a completed one",
            "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"><c:prop-filter name=\"STATUS\"><c:text-match negate-condition=\"yes\">completed</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>",
            ["STATUS:COMPLETED"], false
        ),
        (
            "i;octet is exact",
            "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"><c:prop-filter name=\"SUMMARY\"><c:text-match collation=\"i;octet\">milk</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>",
            ["SUMMARY:Milk"], false
        ),
        (
            "a category among several",
            "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"><c:prop-filter name=\"CATEGORIES\"><c:text-match>dairy</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>",
            ["CATEGORIES:Food,Dairy"], true
        ),
        (
            "a parameter",
            "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"><c:prop-filter name=\"DUE\"><c:param-filter name=\"VALUE\"><c:text-match>DATE</c:text-match></c:param-filter></c:prop-filter></c:comp-filter></c:comp-filter>",
            ["DUE;VALUE=DATE:20261207"], true
        ),
        (
            "due in the week (Reminders)",
            "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"><c:time-range start=\"20261207T000000Z\" end=\"20261214T000000Z\"/></c:comp-filter></c:comp-filter>",
            ["DUE;VALUE=DATE:20261207"], true
        ),
        (
            "due before the week",
            "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"><c:time-range start=\"20261207T000000Z\" end=\"20261214T000000Z\"/></c:comp-filter></c:comp-filter>",
            ["DUE;VALUE=DATE:20261206"], false
        ),
        (
            "no dates at all: in every range",
            "<c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"><c:time-range start=\"20261207T000000Z\"/></c:comp-filter></c:comp-filter>",
            [], true
        ),
    ]

    @Test(arguments: filters)
    func filtersAreEvaluatedAsRFC4791Says(what: String, filter: String, lines: [String], matches: Bool) {
        #expect(Self.filter(filter).matches(Self.todo(lines)) == matches, "\(what)")
    }
}
