import Foundation
import Testing
@testable import PulseCalendar

/// WebDAV's XML bodies as CalDAV clients send them, read; hostile ones refused.
@Suite struct DAVXMLTests {
    /// As the `caldav` library (Home Assistant's) asks for the principal.
    static let principal = """
        <?xml version='1.0' encoding='utf-8'?>
        <D:propfind xmlns:D="DAV:"><D:prop><D:current-user-principal/></D:prop></D:propfind>
        """

    /// As Apple's clients write a query: two prefixes, one declared on an inner element, CRLF.
    static let query = """
        <?xml version="1.0" encoding="UTF-8"?>\r
        <B:calendar-query xmlns:B="urn:ietf:params:xml:ns:caldav">\r
          <A:prop xmlns:A="DAV:"><A:getetag/><B:calendar-data/></A:prop>\r
          <B:filter><B:comp-filter name="VCALENDAR"><B:comp-filter name='VTODO'>\r
            <B:prop-filter name="COMPLETED"><B:is-not-defined/></B:prop-filter>\r
          </B:comp-filter></B:comp-filter></B:filter>\r
        </B:calendar-query>\r

        """

    /// RFC 6578's sync-collection, with the default namespace, a comment and a CDATA token.
    static let sync = """
        <?xml version="1.0" encoding="utf-8" ?>
        <!-- from a client -->
        <sync-collection xmlns="DAV:">
          <sync-token><![CDATA[https://h.local/sync/7]]></sync-token>
          <sync-level>1</sync-level>
          <prop><getetag/><getcontenttype/></prop>
        </sync-collection>
        """

    @Test func aPropfindOfTheCaldavLibraryIsRead() throws {
        let root = try DAVXML.parse(Array(Self.principal.utf8))
        #expect(root.namespace == DAVXML.dav && root.name == "propfind")
        #expect(root.child(DAVXML.dav, "prop")?.children.map(\.name) == ["current-user-principal"])
    }

    @Test func aQueryWithPrefixesDeclaredOnTheWayIsReadByNamespace() throws {
        let root = try DAVXML.parse(Array(Self.query.utf8))
        #expect(root.namespace == DAVXML.caldav && root.name == "calendar-query")
        let prop = try #require(root.child(DAVXML.dav, "prop"))
        #expect(prop.children.map { "\($0.namespace) \($0.name)" } == ["DAV: getetag", "\(DAVXML.caldav) calendar-data"])
        let outer = try #require(root.child(DAVXML.caldav, "filter")?.child(DAVXML.caldav, "comp-filter"))
        #expect(outer.attribute("name") == "VCALENDAR")
        let todo = try #require(outer.child(DAVXML.caldav, "comp-filter"))
        #expect(todo.attribute("name") == "VTODO")
        #expect(todo.child(DAVXML.caldav, "prop-filter")?.attribute("name") == "COMPLETED")
        #expect(!root.text.contains("\r"), "line ends read as LF")
    }

    @Test func aSyncCollectionWithTheDefaultNamespaceACommentAndCDATAIsRead() throws {
        let root = try DAVXML.parse(Array(Self.sync.utf8))
        #expect(root.namespace == DAVXML.dav && root.name == "sync-collection")
        #expect(root.child(DAVXML.dav, "sync-token")?.text == "https://h.local/sync/7")
        #expect(root.child(DAVXML.dav, "sync-level")?.text == "1")
        #expect(root.child(DAVXML.dav, "prop")?.children.map(\.name) == ["getetag", "getcontenttype"])
    }

    @Test func referencesAreReadAndWhatIsWrittenReadsBackTheSame() throws {
        let text = "<a xmlns=\"DAV:\" x=\"1 &amp; 2&#10;\tthree\"><b>&lt;&#x17C;&gt; &quot;&apos;</b><c/>tail</a>"
        let root = try DAVXML.parse(Array(text.utf8))
        #expect(root.attribute("x") == "1 & 2\n three")
        #expect(root.child(DAVXML.dav, "b")?.text == "<ż> \"'")
        #expect(root.text == "tail")
        let written = DAVXML.serialize(root)
        #expect(try DAVXML.parse(Array(written.utf8)) == root)
        let multistatus = DAVElement(
            DAVXML.dav, "multistatus",
            children: [
                DAVElement(
                    DAVXML.dav, "response",
                    children: [
                        DAVElement(DAVXML.dav, "href", text: "/caldav/lists/a&b/"),
                        DAVElement(DAVXML.caldav, "calendar-data", text: "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"),
                    ])
            ])
        let document = DAVXML.serialize(multistatus)
        #expect(document.contains("<d:multistatus xmlns:c=\"urn:ietf:params:xml:ns:caldav\" xmlns:d=\"DAV:\">"))
        #expect(document.contains("/caldav/lists/a&amp;b/"))
        #expect(try DAVXML.parse(Array(document.utf8)) == multistatus)
    }

    static let refused: [(String, String, DAVXMLError.Code)] = [
        (
            "an external entity (XXE)",
            "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><d:prop xmlns:d=\"DAV:\">&x;</d:prop>",
            .documentType
        ),
        (
            "a billion laughs", "<!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;\">]><l>&b;</l>",
            .documentType
        ),
        ("an entity nobody declared", "<d:prop xmlns:d=\"DAV:\">&x;</d:prop>", .documentType),
        ("a declaration inside", "<a><!ENTITY x \"y\"></a>", .documentType),
        ("a prefix never declared", "<D:propfind><D:prop/></D:propfind>", .unboundPrefix),
        ("a prefix declared only inside", "<a><d:b xmlns:d=\"DAV:\"/><d:c/></a>", .unboundPrefix),
        ("UTF-16 declared", "<?xml version=\"1.0\" encoding=\"UTF-16\"?><a/>", .notUTF8),
        ("not closed", "<a><b></b>", .malformed),
        ("closed by another", "<a><b></a></b>", .malformed),
        ("two roots", "<a/><b/>", .malformed),
        ("text outside", "<a/>x", .malformed),
        ("nothing", "", .malformed),
        ("an attribute twice", "<a x=\"1\" x=\"2\"/>", .malformed),
        ("the same attribute by two prefixes", "<a xmlns:p=\"u\" xmlns:q=\"u\" p:x=\"1\" q:x=\"2\"/>", .malformed),
        ("an unquoted attribute", "<a x=1/>", .malformed),
        ("< in an attribute", "<a x=\"<\"/>", .malformed),
        ("a bare &", "<a>1 & 2</a>", .malformed),
        ("a reference to NUL", "<a>&#0;</a>", .malformed),
        ("a reference with a sign", "<a>&#+65;</a>", .malformed),
        ("a control character", "<a>\u{1}</a>", .malformed),
        ("]]> in text", "<a>]]></a>", .malformed),
        ("an open comment", "<a><!-- x</a>", .malformed),
        ("a name starting with a digit", "<1a/>", .malformed),
        ("an empty prefix", "<:a/>", .malformed),
    ]

    @Test(arguments: refused)
    func hostileAndMalformedBodiesAreRefusedWithTheirCode(what: String, text: String, code: DAVXMLError.Code) {
        do {
            let root = try DAVXML.parse(Array(text.utf8))
            Issue.record("\(what): read as \(root)")
        } catch {
            #expect(error.code == code, "\(what): \(error)")
        }
    }

    @Test func everyLimitIsCheckedBeforeItsCostIsPaid() {
        let small = DAVXMLLimits(bytes: 2048, depth: 4, elements: 10, attributes: 2)
        func code(_ text: String) -> DAVXMLError.Code? {
            do { _ = try DAVXML.parse(Array(text.utf8), limits: small) } catch { return error.code }
            return nil
        }
        #expect(code("<a>" + String(repeating: "x", count: 3000) + "</a>") == .tooLarge)
        #expect(code(String(repeating: "<a>", count: 5) + String(repeating: "</a>", count: 5)) == .tooDeep)
        #expect(code(String(repeating: "<a>", count: 4) + String(repeating: "</a>", count: 4)) == nil)
        #expect(code("<a>" + String(repeating: "<b/>", count: 10) + "</a>") == .tooMany)
        #expect(code("<a x=\"1\" y=\"2\" z=\"3\"/>") == .tooMany)
        #expect(code("<a x=\"1\" y=\"2\"/>") == nil)
        #expect(code("<" + String(repeating: "a", count: 300) + "/>") == .malformed)
    }

    static func mutate(_ input: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        let pieces = [
            "<", ">", "/>", "</", "\"", "'", "&", "&amp;", "&#x41;", ";", ":", "=", "<!--", "-->", "<![CDATA[", "]]>", "<?", "?>",
            "<!DOCTYPE", "xmlns:q=\"DAV:\"", " x=\"1\"", "<d:prop>", "</d:prop>", "\u{0}", "\r\n", "\u{FF}",
        ]
        var bytes = input
        for _ in 0...Int.random(in: 0...3, using: &random) {
            let at = Int.random(in: 0...bytes.count, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0 where !bytes.isEmpty: bytes[Int.random(in: bytes.indices, using: &random)] ^= 1 << UInt8.random(in: 0...7, using: &random)
            case 1: bytes.insert(contentsOf: Array(pieces.randomElement(using: &random)!.utf8), at: at)
            case 2 where !bytes.isEmpty: bytes.removeSubrange(at..<Int.random(in: at...min(bytes.count, at + 30), using: &random))
            case 3 where bytes.count > 2:
                let a = Int.random(in: 0..<bytes.count, using: &random), b = Int.random(in: a..<min(bytes.count, a + 60), using: &random)
                bytes.insert(contentsOf: bytes[a...b], at: at)
            default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: at)
            }
        }
        return bytes
    }

    /// Part of issue 59's fuzz run (docs/SECURITY.md): 10 000 mutated bodies by default.
    @Test func mutatedBodiesAreReadOrRefusedNeverCrashAndWhatReadsWritesBackTheSame() throws {
        let environment = ProcessInfo.processInfo.environment
        let iterations = environment["PULSE_ICAL_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 10_000
        var random = SeededGenerator(seed: environment["PULSE_FUZZ_SEED"].flatMap(UInt64.init) ?? 0xDA7_F00D)
        let seeds = [Self.principal, Self.query, Self.sync].map { Array($0.utf8) }
        var read = 0
        var codes: [DAVXMLError.Code: Int] = [:]
        for _ in 0..<iterations {
            let input = Self.mutate(seeds.randomElement(using: &random)!, &random)
            do {
                let root = try DAVXML.parse(input)
                read += 1
                #expect(try DAVXML.parse(Array(DAVXML.serialize(root).utf8)) == root, "input \(input)")
            } catch {
                codes[error.code, default: 0] += 1
            }
        }
        #expect(read > iterations / 20, "read \(read) of \(iterations)")
        #expect(codes.count >= 4, "refusals: \(codes)")
        print("WebDAV XML fuzz: \(iterations) inputs: \(read) read, refused \(codes.map { "\($0.key.rawValue) \($0.value)" }.sorted())")
    }
}
