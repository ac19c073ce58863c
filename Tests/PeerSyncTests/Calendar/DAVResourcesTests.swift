import Testing
@testable import PulseCalDAV
@testable import PulseCalendar

/// What a PROPFIND or REPORT answers of each resource, as a 207 Multi-Status a client reads.
@Suite struct DAVResourcesTests {
    static let member = "0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b"
    static let collection = DAVResource.collection(member: member, id: "shopping", name: "Shopping & more", token: "https://pulse/sync/abc")
    static let object = DAVResource.object(
        member: member, collection: "shopping", name: "6B29FC40.ics", etag: "\"0123456789abcdef\"",
        text: "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")

    /// The answer read back as a client reads it: each href with its found and missing properties.
    static func read(_ multistatus: DAVMultistatus) throws -> [(href: String, found: [DAVElement], missing: [String])] {
        let root = try DAVXML.parse(Array(multistatus.document.utf8))
        #expect(root.namespace == DAVXML.dav && root.name == "multistatus")
        return root.children(DAVXML.dav, "response").map { response in
            var found: [DAVElement] = [], missing: [String] = []
            for stat in response.children(DAVXML.dav, "propstat") {
                let props = stat.child(DAVXML.dav, "prop")?.children ?? []
                if stat.child(DAVXML.dav, "status")?.text == "HTTP/1.1 200 OK" { found += props } else { missing += props.map(\.name) }
            }
            return (response.child(DAVXML.dav, "href")?.text ?? "", found, missing)
        }
    }

    @Test func theRootAndThePrincipalSayWhoSignedInAndWhereTheirListsAre() throws {
        var answer = DAVMultistatus()
        let asked = DAVProps.some([
            DAVName(DAVXML.dav, "current-user-principal"), DAVName(DAVXML.caldav, "calendar-home-set"), DAVName(DAVXML.dav, "quota-used-bytes"),
        ])
        answer.add(.root(principal: Self.member), asked)
        answer.add(.principal(member: Self.member, name: "Anna"), asked)
        let responses = try Self.read(answer)
        #expect(responses.map(\.href) == ["/dav/", "/dav/\(Self.member)/"])
        for response in responses {
            #expect(response.found.first { $0.name == "current-user-principal" }?.child(DAVXML.dav, "href")?.text == "/dav/\(Self.member)/")
            #expect(response.found.first { $0.name == "calendar-home-set" }?.child(DAVXML.dav, "href")?.text == "/dav/\(Self.member)/lists/")
            #expect(response.missing == ["quota-used-bytes"], "what we do not have is 404, not left out")
        }
    }

    @Test func aCollectionIsACalendarOfToDosWithItsTokenAndItsReports() throws {
        var answer = DAVMultistatus()
        answer.add(
            Self.collection,
            .some([
                DAVName(DAVXML.dav, "resourcetype"), DAVName(DAVXML.dav, "displayname"), DAVName(DAVXML.caldav, "supported-calendar-component-set"),
                DAVName(DAVXML.dav, "sync-token"), DAVName("http://calendarserver.org/ns/", "getctag"), DAVName(DAVXML.dav, "supported-report-set"),
            ]))
        let response = try #require(try Self.read(answer).first)
        #expect(response.href == "/dav/\(Self.member)/lists/shopping/" && response.missing.isEmpty)
        let props = Dictionary(uniqueKeysWithValues: response.found.map { ($0.name, $0) })
        #expect(props["resourcetype"]?.children.map(\.name) == ["collection", "calendar"])
        #expect(props["displayname"]?.text == "Shopping & more")
        #expect(props["supported-calendar-component-set"]?.children.first?.attribute("name") == "VTODO")
        #expect(props["sync-token"]?.text == "https://pulse/sync/abc" && props["getctag"]?.text == "https://pulse/sync/abc")
        #expect(
            props["supported-report-set"]?.children.compactMap { $0.child(DAVXML.dav, "report")?.children.first?.name } == [
                "calendar-query", "calendar-multiget", "sync-collection",
            ])
    }

    @Test func anObjectGivesItsETagAndItsTextAndAllpropLeavesTheTextOut() throws {
        var answer = DAVMultistatus()
        answer.add(Self.object, .some([DAVName(DAVXML.dav, "getetag"), DAVName(DAVXML.caldav, "calendar-data")]))
        answer.add(Self.object, .all)
        answer.add(Self.object, .names)
        answer.add(href: "/dav/\(Self.member)/lists/shopping/gone.ics", status: 404)
        answer.syncToken = "https://pulse/sync/def"
        let responses = try Self.read(answer)
        #expect(responses[0].found.map(\.text) == ["\"0123456789abcdef\"", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"])
        #expect(Set(responses[1].found.map(\.name)) == ["resourcetype", "getetag", "getcontenttype"] && responses[1].missing.isEmpty)
        #expect(responses[2].found.contains { $0.name == "calendar-data" && $0.text.isEmpty })
        #expect(responses[3].href.hasSuffix("/gone.ics"))
        let root = try DAVXML.parse(Array(answer.document.utf8))
        #expect(root.children(DAVXML.dav, "response").last?.child(DAVXML.dav, "status")?.text == "HTTP/1.1 404 Not Found")
        #expect(root.child(DAVXML.dav, "sync-token")?.text == "https://pulse/sync/def")
    }
}
