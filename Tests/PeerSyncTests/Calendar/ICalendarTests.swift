import Testing
@testable import PulseCalendar

/// Reading and writing iCalendar objects as the CalDAV clients of issue 59 write them.
@Suite struct ICalendarTests {
    /// As Apple Reminders writes a to-do (CRLF, a folded line, a DUE in a zone, an alarm).
    static let reminders = """
        BEGIN:VCALENDAR\r
        VERSION:2.0\r
        PRODID:-//Apple Inc.//iOS 17.0//EN\r
        BEGIN:VTODO\r
        UID:6B29FC40-CA47-1067-B31D-00DD010662DA\r
        DTSTAMP:20261205T091500Z\r
        SUMMARY:Milk\\, the 2 l bottle\\; not the small one\r
        DESCRIPTION:From the shop on the corner. A long note that goes on past seventy\r
          -five octets, so the writer folded it.\r
        DUE;TZID=Europe/Warsaw:20261206T180000\r
        STATUS:NEEDS-ACTION\r
        X-APPLE-SORT-ORDER:1\r
        BEGIN:VALARM\r
        ACTION:DISPLAY\r
        TRIGGER;VALUE=DATE-TIME:20261206T170000Z\r
        END:VALARM\r
        END:VTODO\r
        END:VCALENDAR\r

        """

    /// As a simple writer does: LF only, lower-case names, a line folded inside "ż" (2 octets).
    static let plain =
        "begin:vcalendar\nversion:2.0\nbegin:vtodo\nuid:a1\nsummary:Mas\u{0142}o i \u{017C}\n"
        + "categories:Food,\"Dairy\"\nend:vtodo\nend:vcalendar\n"

    @Test func aRemindersToDoIsReadWithItsFoldedLinesEscapesZoneAndAlarm() throws {
        let calendar = try ICalendar.parse(Array(Self.reminders.utf8))
        #expect(calendar.name == "VCALENDAR")
        let todo = try #require(calendar.components.first)
        #expect(todo.name == "VTODO")
        #expect(todo.first("summary")?.text == "Milk, the 2 l bottle; not the small one")
        #expect(todo.first("DESCRIPTION")?.text == "From the shop on the corner. A long note that goes on past seventy -five octets, so the writer folded it.")
        let due = try ICalDate(try #require(todo.first("DUE")))
        #expect(due == ICalDate(year: 2026, month: 12, day: 6, time: (18, 0, 0), zone: "Europe/Warsaw"))
        #expect(due.isoDay == "2026-12-06")
        #expect(todo.first("X-APPLE-SORT-ORDER")?.value == "1")
        #expect(todo.components.map(\.name) == ["VALARM"])
        #expect(todo.components[0].first("TRIGGER")?.parameter("value") == "DATE-TIME")
    }

    @Test func lineFeedsLowerCaseAndAFoldInsideAUTF8SequenceAreRead() throws {
        // Fold "ż" (C5 BC) between its two octets, as RFC 5545 §3.1 says simple writers do.
        var bytes = Array(Self.plain.utf8)
        let z = try #require(bytes.firstIndex(of: 0xC5))
        bytes.insert(contentsOf: [13, 10, 32], at: z + 1)
        let todo = try #require(try ICalendar.parse(bytes).components.first)
        #expect(todo.first("SUMMARY")?.text == "Masło i ż")
        #expect(todo.first("CATEGORIES").map { ICalText.list($0.value) } == ["Food", "\"Dairy\""])
    }

    @Test func whatIsWrittenIsFoldedAt75OctetsNeverInsideACharacterAndReadsBackTheSame() throws {
        let summary = String(repeating: "Żółć, ", count: 40) + "koniec; \\ \n nowa linia"
        let calendar = ICalComponent(
            "VCALENDAR", properties: [ICalProperty("VERSION", "2.0")],
            components: [
                ICalComponent(
                    "VTODO",
                    properties: [
                        ICalProperty("UID", "x-1"),
                        ICalProperty("SUMMARY", text: summary),
                        ICalProperty("X-PULSE-ASSIGNEE", text: "Anna", parameters: [ICalParameter("X-NAME", ["a;b", "c"])]),
                    ])
            ])
        let text = ICalendar.serialize(calendar)
        #expect(text.hasSuffix("END:VCALENDAR\r\n"))
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: false) {
            #expect(line.utf8.count <= 75, "a line of \(line.utf8.count) octets")
        }
        #expect(text.contains("X-NAME=\"a;b\",c:Anna"))
        let again = try ICalendar.parse(Array(text.utf8))
        #expect(again == calendar)
        #expect(again.components[0].first("SUMMARY")?.text == summary)
    }

    @Test(arguments: [
        ("Milk, 2 l; cold\\ \n", "Milk\\, 2 l\\; cold\\\\ \\n"),
        ("line\r\nend", "line\\nend"),
        ("", ""),
    ])
    func textIsEscapedAndUnescaped(text: String, value: String) {
        #expect(ICalText.escape(text) == value)
        #expect(ICalText.unescape(value) == text.replacingOccurrences(of: "\r\n", with: "\n"))
    }

    @Test(arguments: [
        ("20261205", ICalDate(year: 2026, month: 12, day: 5)),
        ("20240229T235960Z", ICalDate(year: 2024, month: 2, day: 29, time: (23, 59, 60), utc: true)),
        ("20261205T080000", ICalDate(year: 2026, month: 12, day: 5, time: (8, 0, 0))),
        ("20230229", nil), ("20261305", nil), ("20261200", nil), ("20261205T240000", nil),
        ("2026-12-05", nil), ("20261205T0800", nil), ("20261205X080000", nil), ("20261205T080000+", nil), ("", nil),
    ])
    func datesAreReadOnlyWhenTheyNameARealDayAndTime(value: String, date: ICalDate?) {
        #expect(ICalDate(value: value) == date)
        if let date { #expect(date.value == value) }
    }

    @Test(arguments: [("20261205", "20261206"), ("20261231", "20270101"), ("20240228", "20240229"), ("20230228", "20230301"), ("20261130", "20261201")])
    func theNextDayCrossesMonthsYearsAndLeapDays(day: String, next: String) throws {
        #expect(try #require(ICalDate(value: day)).nextDay.value == next)
    }

    @Test func aDateSaidToBeADayButHoldingATimeIsRefused() throws {
        let due = ICalProperty("DUE", "20261205T080000", parameters: [ICalParameter("VALUE", ["DATE"])])
        #expect(throws: ICalError(.badValue, line: 0, "DUE says VALUE=DATE but holds a time")) { try ICalDate(due) }
    }

    static let refused: [(String, String, ICalError.Code)] = [
        ("an empty body", "", .unbalanced),
        ("no calendar", "BEGIN:VTODO\r\nEND:VTODO\r\n", .notACalendar),
        ("never ended", "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\n", .unbalanced),
        ("ended wrongly", "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", .unbalanced),
        ("an END alone", "END:VCALENDAR\r\n", .unbalanced),
        ("two calendars", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\nBEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", .notACalendar),
        ("a calendar inside", "BEGIN:VCALENDAR\r\nBEGIN:VCALENDAR\r\nEND:VCALENDAR\r\nEND:VCALENDAR\r\n", .notACalendar),
        ("a property outside", "UID:1\r\nBEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", .notACalendar),
        ("no colon", "BEGIN:VCALENDAR\r\nSUMMARY Milk\r\nEND:VCALENDAR\r\n", .malformedLine),
        ("no name", "BEGIN:VCALENDAR\r\n:Milk\r\nEND:VCALENDAR\r\n", .malformedLine),
        ("a parameter without =", "BEGIN:VCALENDAR\r\nDUE;TZID:1\r\nEND:VCALENDAR\r\n", .malformedLine),
        ("an open quote", "BEGIN:VCALENDAR\r\nDUE;TZID=\"Eu:1\r\nEND:VCALENDAR\r\n", .malformedLine),
        ("a quote inside", "BEGIN:VCALENDAR\r\nDUE;TZID=E\"u\":1\r\nEND:VCALENDAR\r\n", .malformedLine),
        ("a control character", "BEGIN:VCALENDAR\r\nSUMMARY:Mi\u{1}lk\r\nEND:VCALENDAR\r\n", .malformedLine),
        ("a bare CR", "BEGIN:VCALENDAR\r\nSUMMARY:Mi\rlk\r\nEND:VCALENDAR\r\n", .malformedLine),
        ("a continuation first", " BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", .malformedLine),
        ("BEGIN with no name", "BEGIN:VCALENDAR\r\nBEGIN:\r\nEND:\r\nEND:VCALENDAR\r\n", .malformedLine),
    ]

    @Test(arguments: refused)
    func malformedObjectsAreRefusedWithTheirCode(what: String, text: String, code: ICalError.Code) {
        do {
            _ = try ICalendar.parse(Array(text.utf8))
            Issue.record("\(what): read")
        } catch {
            #expect(error.code == code, "\(what): \(error)")
        }
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        var bytes = Array("BEGIN:VCALENDAR\r\nSUMMARY:Milk\r\nEND:VCALENDAR\r\n".utf8)
        bytes[26] = 0xFF
        #expect(throws: ICalError(.notUTF8, line: 2, "a line that is not UTF-8")) { try ICalendar.parse(bytes) }
    }

    @Test func everyLimitIsCheckedBeforeItsCostIsPaid() {
        let small = ICalLimits(bytes: 4096, lines: 20, lineBytes: 200, depth: 3, components: 4, parameters: 3)
        func code(_ text: String) -> ICalError.Code? {
            do { _ = try ICalendar.parse(Array(text.utf8), limits: small) } catch { return error.code }
            return nil
        }
        let open = "BEGIN:VCALENDAR\r\n", close = "END:VCALENDAR\r\n"
        #expect(code(open + "X:" + String(repeating: "a", count: 5000) + "\r\n" + close) == .tooLarge)
        #expect(code(open + "X:" + String(repeating: "a", count: 300) + "\r\n" + close) == .tooLarge)
        #expect(code(open + "X:" + String(repeating: "a\r\n ", count: 100) + "\r\n" + close) == .tooMany)
        #expect(code(open + "X:" + String(repeating: "aaaaaaaaa\r\n ", count: 19) + "\r\n" + close) == .tooMany)
        #expect(code(open + String(repeating: "BEGIN:A\r\n", count: 3) + String(repeating: "END:A\r\n", count: 3) + close) == .tooDeep)
        #expect(code(open + String(repeating: "BEGIN:A\r\nEND:A\r\n", count: 4) + close) == .tooMany)
        #expect(code(open + "X;A=1;B=2;C=3;D=4:v\r\n" + close) == .tooMany)
        #expect(code(open + "X;A=1;B=2;C=3:v\r\n" + close) == nil)
        // 1 000 folds of one byte each, under the line limit: the line grows, never past it.
        let wide = ICalLimits(bytes: 65536, lines: 5000, lineBytes: 500, depth: 3, components: 4, parameters: 3)
        #expect(throws: ICalError.self) {
            try ICalendar.parse(Array((open + "X:" + String(repeating: "\r\n a", count: 1000) + "\r\n" + close).utf8), limits: wide)
        }
    }
}
