import PulseModel
import PulseStore

/// A chore a kid says they did (issue 58, item 4), and what became of it.
public struct ChoreReport: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable { case waiting, approved, declined }
    public let id: String
    public let kid: String
    public let kidName: String
    /// The chore (its catalogue id), its title and title's key, and its peanuts, as reported.
    public let item: String
    public let title: String
    public var titleKey: String? = nil
    public let peanuts: Int
    /// The day the kid did it (`YYYY-MM-DD`): an approval earns on that day.
    public let day: String
    /// When it was reported, Unix milliseconds.
    public let time: Int64
    public let status: Status
    /// A declining parent's word to the kid.
    public var word: String? = nil
    /// The adult who approved or declined it (their member's name), when known.
    public var decidedBy: String? = nil
    /// An approval's ledger entry, and what the ledger rule made of it (`counted`, or
    /// `declined-repeat` when the chore had already earned that day).
    public var entry: String? = nil
    public var outcome: String? = nil
}

/// Chores a kid reports for a parent to approve (decision 0023). With the household's
/// `kids_approval` on, a kid's chore is not earned at a tap: it is reported (a `chore_report`
/// row, counted nowhere) and waits. An adult (with the PIN) approves it — the earn, on the day
/// the kid did it and in the ledger's order where the kid reported it, its id made from the
/// report's, so two approvals on two computers apart are one row and count once — or declines it, with an optional word. An approval and a
/// decline made apart: the approval stands (the kid keeps what an adult gave). Rules are kept,
/// not done: they earn at a tap as before.
extension Household {
    /// How long a decided report stays in the lists (a waiting one stays until decided).
    static let decidedReportsShownDays = 7

    /// Whether a kid's chore waits for a parent (the household's setting; absent: no).
    public func kidsApproval() throws -> Bool {
        try store.value(.settings, "settings", "kids_approval")?.boolValue ?? false
    }

    /// Turns approval on or off for the whole household (an adult's, with the PIN).
    @discardableResult
    public func setKidsApproval(_ value: String, pin: String?) throws -> Bool {
        let on: Bool
        switch value.lowercased() {
        case "on", "true", "yes", "1": on = true
        case "off", "false", "no", "0": on = false
        default: throw HouseholdError.refuse(.invalidSwitch, ["key": "kids_approval", "value": .string(value)])
        }
        try requireAdult(pin)
        try store.write(member: memberID) { try $0.put(.settings, "settings", ["kids_approval": .bool(on)]) }
        return on
    }

    /// Whether `item` waits for a parent once a kid did it.
    func needsApproval(_ item: CatalogueItem, approval: Bool) -> Bool { approval && item.kind == .chore }

    /// A kid says they did a chore today (a kid's action: no PIN): it waits for a parent.
    @discardableResult
    public func reportChore(kid kidHandle: String, item itemHandle: String, today: IsoDate = Days.today()) throws -> ChoreReport {
        let kid = try resolveKid(kidHandle)
        let item = try resolveSelected(itemHandle, kinds: [.chore])
        guard try kidsApproval() else { throw HouseholdError.refuse(.approvalOff, ["item": .string(item.title)]) }
        try requireTurn(of: kid, for: item)
        if try itemsDoneToday(kid: kid, today: today).contains(item.id) {
            throw HouseholdError.refuse(.alreadyEarnedToday, ["kid": .string(kid.name), "item": .string(item.title), "peanuts": JSONValue(item.peanuts)])
        }
        let day = today.description
        if try choreReports(kid: kid).contains(where: { $0.item == item.id && $0.day == day && $0.status != .declined }) {
            throw HouseholdError.refuse(.alreadyReported, ["kid": .string(kid.name), "item": .string(item.title)])
        }
        let id = RowIDRules.newRowID()
        let created = try store.orderingKey()
        try store.write(member: memberID) { tx in
            try tx.create(
                .choreReport, id,
                [
                    "kid": .text(kid.id), "selection": .text(item.id), "title": .text(item.title), "peanuts": .integer(Int64(item.peanuts)),
                    "day": .text(day), "created": .integer(created), "declined": .null, "word": .null,
                ])
        }
        return try report(id)
    }

    /// The reports of one kid, or of every kid: those waiting, and those decided in the last
    /// week; oldest first.
    public func choreReports(kid handle: String? = nil) throws -> [ChoreReport] {
        let kids = try handle.map { [try resolveKid($0)] } ?? self.kids()
        return try kids.flatMap { try choreReports(kid: $0) }.sorted { ($0.time, $0.id) < ($1.time, $1.id) }
    }

    func choreReports(kid: Kid) throws -> [ChoreReport] {
        let rows = try store.rows(.choreReport, RowQuery(where: [("kid", .text(kid.id))], orderedBy: ["created"]))
        guard !rows.isEmpty else { return [] }
        let lines = Dictionary(uniqueKeysWithValues: try ledgerLines(kid: kid.id).map { ($0.id, $0) })
        let names = try memberNames()
        let declinedField = EntityKind.choreReport.schema.number(of: "declined")
        let shownSince = Days.adding(-Self.decidedReportsShownDays, to: Days.today()).description
        return try rows.compactMap { row -> ChoreReport? in
            let day = row.text("day")
            let earn = lines[Ledger.earnID(day: day, random: row.id)]
            let declined = row["declined"].integerValue != nil
            let status: ChoreReport.Status = earn != nil ? .approved : declined ? .declined : .waiting
            if status != .waiting && day < shownSince { return nil }
            var report = ChoreReport(
                id: row.id, kid: kid.id, kidName: kid.name, item: row.text("selection"), title: row.text("title"),
                peanuts: Int(row.integer("peanuts")), day: day, time: HybridTimestamp(rawValue: row.integer("created")).milliseconds,
                status: status)
            report.titleKey = Catalogue.titleKey(id: report.item, title: report.title)
            switch status {
            case .approved:
                report.entry = earn?.id
                report.outcome = earn?.outcome
                report.decidedBy = earn?.by
            case .declined:
                report.word = row.optionalText("word")
                if let declinedField, let version = try store.versions(.choreReport, row.id)[declinedField] {
                    report.decidedBy = version.member.flatMap { names[$0] }
                }
            case .waiting: break
            }
            return report
        }
    }

    /// An adult approves a kid's report (with the PIN): the peanuts are earned, on the day the kid did it.
    @discardableResult
    public func approveReport(_ handle: String, pin: String?) throws -> ChoreReport {
        let report = try waitingReport(handle)
        try requireAdult(pin)
        // Every field as every approval of this report writes it (the report's own stamp for its
        // place in the ledger): two adults approving it apart make one row, never a conflict.
        let created = try store.value(.choreReport, report.id, "created")?.integerValue ?? store.orderingKey()
        try store.write(member: memberID) { tx in
            try tx.create(
                .ledgerEntry, Ledger.earnID(day: report.day, random: report.id),
                [
                    "kid": .text(report.kid), "kind": .text(Ledger.Entry.Kind.earn.rawValue), "peanuts": .integer(Int64(report.peanuts)),
                    "selection": .text(report.item), "title": .text(report.title), "created": .integer(created), "hidden": .bool(false),
                ])
        }
        return try self.report(report.id)
    }

    /// An adult declines a kid's report (with the PIN), with an optional word to the kid.
    @discardableResult
    public func declineReport(_ handle: String, word: String?, pin: String?) throws -> ChoreReport {
        let report = try waitingReport(handle)
        let clean = try word.map { $0.trimmed }.flatMap { $0.isEmpty ? nil : try Validation.name($0, what: "word", max: 180) }
        try requireAdult(pin)
        let declined = try store.orderingKey()
        try store.write(member: memberID) { tx in
            try tx.put(.choreReport, report.id, ["declined": .integer(declined), "word": clean.map { .text($0) } ?? .null])
        }
        return try self.report(report.id)
    }

    private func waitingReport(_ handle: String) throws -> ChoreReport {
        let reports = try choreReports()
        // Its chore's id names the one report of it that waits (`kids approve Sam chore_001`).
        // With none waiting, its latest (refused below: already decided).
        let ofChore = reports.filter { $0.item == handle.trimmed }
        let waiting = ofChore.filter { $0.status == .waiting }
        let report =
            waiting.count == 1
            ? waiting[0]
            : waiting.isEmpty && !ofChore.isEmpty
                ? ofChore[ofChore.count - 1] : try Handles.resolve(handle, in: reports, what: "report", list: "reports", name: \.title, id: \.id)
        guard report.status == .waiting else {
            throw HouseholdError.refuse(
                .alreadyDecided, ["kid": .string(report.kidName), "item": .string(report.title), "status": .string(report.status.rawValue)])
        }
        return report
    }

    private func report(_ id: String) throws -> ChoreReport {
        guard let report = try choreReports().first(where: { $0.id == id }) else {
            throw HouseholdError.io("the report \(id) was written but cannot be read back")
        }
        return report
    }
}

extension Household {
    static let approvalMethods: [APIMethod] = [
        .read("kids.reports.list", for: APIMethod.everyone) { a, h in try h.choreReports(kid: a.optional("kid")) },
        .write("kids.report", for: APIMethod.everyone) { a, h in try h.reportChore(kid: a.string("kid"), item: a.string("item")) },
        // An adult's, with the PIN (a computer's page only: parents' mode).
        .write("kids.approve") { a, h in try h.approveReport(a.string("report"), pin: a.optional("pin")) },
        .write("kids.decline") { a, h in try h.declineReport(a.string("report"), word: a.optional("word"), pin: a.optional("pin")) },
        .write("kids.approval.set") { a, h in try h.setKidsApproval(a.string("value"), pin: a.optional("pin")) },
    ]
}
