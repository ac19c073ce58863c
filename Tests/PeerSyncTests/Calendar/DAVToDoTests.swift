import Testing
@testable import PulseCalDAV
@testable import PulseCalendar

/// An item, a task or a project as a VTODO and back (decision 0025's table): what is mapped,
/// what is ours, what is kept verbatim, and what is refused with its reason.
@Suite struct DAVToDoTests {
    @Test(arguments: [
        (Int64(1_796_465_410_000), "20261205T101010Z"), (1_709_251_199_000, "20240229T235959Z"), (951_868_800_000, "20000301T000000Z"),
        (0, "19700101T000000Z"), (1_796_465_410_999, "20261205T101010Z"),
    ])
    func timesAreWrittenInUTC(milliseconds: Int64, text: String) {
        #expect(DAVToDo.utc(milliseconds) == text)
    }

    static let alarm = ICalComponent("VALARM", properties: [ICalProperty("ACTION", "DISPLAY"), ICalProperty("TRIGGER", "-PT15M")])

    @Test func aTaskIsServedWithWhatIsMappedWhatIsOursAndWhatWasKept() throws {
        let todo = DAVToDo(
            uid: "0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b", summary: "Hoover, the stairs; all of them", completed: 1_796_465_410_000, due: "2026-12-07",
            description: "Not the cat", assignee: "Zoë", created: 1_709_251_199_000, modified: 1_796_465_410_000,
            kept: DAVKept(properties: [ICalProperty("PRIORITY", "1"), ICalProperty("X-APPLE-SORT-ORDER", "7")], components: [Self.alarm]))
        let text = todo.text
        #expect(text.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 75 })
        let vtodo = try #require(try ICalendar.parse(Array(text.utf8)).components.first)
        #expect(vtodo.first("SUMMARY")?.text == "Hoover, the stairs; all of them")
        #expect(vtodo.first("STATUS")?.value == "COMPLETED" && vtodo.first("COMPLETED")?.value == "20261205T101010Z")
        #expect(vtodo.first("PERCENT-COMPLETE")?.value == "100")
        #expect(vtodo.first("DUE")?.value == "20261207" && vtodo.first("DUE")?.parameter("VALUE") == "DATE")
        #expect(vtodo.first("CREATED")?.value == "20240229T235959Z" && vtodo.first("DTSTAMP")?.value == "20261205T101010Z")
        #expect(vtodo.first("X-PULSE-ASSIGNEE")?.text == "Zoë" && vtodo.first("PRIORITY")?.value == "1")
        #expect(vtodo.components == [Self.alarm])
        // What is served reads back as the same edit: nothing lost on the way round.
        let edit = try DAVToDoEdit(try ICalendar.parse(Array(text.utf8)))
        #expect(edit.uid == todo.uid && edit.summary == todo.summary && edit.done && edit.due == "2026-12-07")
        #expect(edit.description == "Not the cat" && edit.assignee == "Zoë" && edit.kept == todo.kept)
        #expect(DAVKept(text: todo.kept.text) == todo.kept && DAVKept(text: "") == DAVKept() && DAVKept(text: "junk") == nil)
    }

    @Test func anAppleRemindersObjectKeepsItsOwnPropertiesAndAlarmAndDropsOnlyItsStamps() throws {
        let edit = try DAVToDoEdit(try ICalendar.parse(Array(ICalendarTests.reminders.utf8)))
        #expect(edit.uid == "6B29FC40-CA47-1067-B31D-00DD010662DA" && edit.summary == "Milk, the 2 l bottle; not the small one")
        #expect(!edit.done && edit.due == "2026-12-06" && edit.description?.hasPrefix("From the shop") == true)
        #expect(edit.kept.properties.map(\.name) == ["X-APPLE-SORT-ORDER"])
        #expect(edit.kept.components.map(\.name) == ["VALARM"])
        let completedOnly = try DAVToDoEdit(DAVRequestReaderTests.todo(["SUMMARY:Eggs", "COMPLETED:20261205T101010Z"]))
        #expect(completedOnly.done, "COMPLETED without STATUS is done")
        #expect(try DAVToDoEdit(DAVRequestReaderTests.todo(["STATUS:IN-PROCESS"])).done == false)
    }

    static func object(_ components: [ICalComponent]) -> ICalComponent {
        ICalComponent("VCALENDAR", properties: [ICalProperty("VERSION", "2.0")], components: components)
    }

    static let refused: [(String, ICalComponent, Int, String)] = [
        ("an event", object([ICalComponent("VEVENT", properties: [ICalProperty("UID", "e")])]), 403, "supported_component"),
        ("nothing", object([]), 403, "no_todo"),
        (
            "two to-dos",
            object([ICalComponent("VTODO", properties: [ICalProperty("UID", "a")]), ICalComponent("VTODO", properties: [ICalProperty("UID", "a")])]), 403,
            "several_todos"
        ),
        ("no UID", object([ICalComponent("VTODO", properties: [ICalProperty("SUMMARY", "x")])]), 400, "bad_uid"),
        ("two UIDs", object([ICalComponent("VTODO", properties: [ICalProperty("UID", "a"), ICalProperty("UID", "b")])]), 400, "bad_uid"),
        ("a UID of 256 bytes", object([ICalComponent("VTODO", properties: [ICalProperty("UID", String(repeating: "u", count: 256))])]), 400, "bad_uid"),
        ("cancelled", DAVRequestReaderTests.todo(["STATUS:CANCELLED"]), 403, "unsupported_status"),
        ("a due that is no date", DAVRequestReaderTests.todo(["DUE:tomorrow"]), 400, "bad_due"),
        ("a due of Feb 30", DAVRequestReaderTests.todo(["DUE;VALUE=DATE:20260230"]), 400, "bad_due"),
        (
            "9 KiB kept beside the title", DAVRequestReaderTests.todo(["X-NOTES:" + String(repeating: "n", count: 9000)]), 413,
            "too_much_kept"
        ),
    ]

    @Test(arguments: refused)
    func whatCannotBeKeptIsRefusedWithItsReason(what: String, object: ICalComponent, status: Int, code: String) {
        do {
            let edit = try DAVToDoEdit(object)
            Issue.record("\(what): read as \(edit)")
        } catch {
            #expect(error.status == status && error.code == code, "\(what): \(error)")
        }
    }
}
