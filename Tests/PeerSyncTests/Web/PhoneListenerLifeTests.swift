import Testing
@testable import PulseHousehold
@testable import PulseWeb

/// The phones' listener's life (``PhoneListenerLife``), event by event: what is closed, bound,
/// published, saved and answered, and what the choice is afterwards.
@Suite struct PhoneListenerLifeTests {
    typealias Life = PhoneListenerLife
    static let waiting = Refusal(.phonesWaitingForCA, ["holder": "Kitchen"])
    static let busy = Refusal(.phonesCannotListen, ["port": 47655, "reason": "in use"])
    static let on47655 = PhoneSettings(on: true, port: 47655)

    /// One row: from the choice saved, events in order, each with the actions it must return;
    /// then the mode, the choice saved and the problem.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        var saved = PhoneSettings()
        /// CalDAV's choice as saved when the agent started.
        var calDAV = false
        let steps: [(Life.Event, [Life.Action])]
        let mode: Life.Mode
        let settings: PhoneSettings
        var problem: Refusal? = nil
        /// Whether the phones' routes are served at the end (the choice's `on` unless said).
        var phonesOn: Bool? = nil
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "turned on, bound, saved: serving and answered with what phones are",
            steps: [
                (.turn(on: true, port: nil), [.closeListener, .bind(port: 47655)]),
                (.bound(port: 47655), [.publishAddresses, .save(on47655)]),
                (.saved(on47655), [.answer(nil)]),
            ], mode: .serving(port: 47655), settings: on47655),
        Row(
            name: "a port 0 asked for: the port given is the one kept",
            steps: [
                (.turn(on: true, port: 0), [.closeListener, .bind(port: 0)]),
                (.bound(port: 40001), [.publishAddresses, .save(PhoneSettings(on: true, port: 40001))]),
                (.saved(PhoneSettings(on: true, port: 40001)), [.answer(nil)]),
            ], mode: .serving(port: 40001), settings: PhoneSettings(on: true, port: 40001)),
        Row(
            name: "waiting for the household's CA: kept on, nowhere published, answered with why",
            steps: [
                (.turn(on: true, port: nil), [.closeListener, .bind(port: 47655)]),
                (.waitingForCA(waiting), [.publishAddresses, .save(on47655), .answer(waiting)]),
                (.saved(on47655), []),
            ], mode: .waitingForCA, settings: on47655, problem: waiting),
        Row(
            name: "the port cannot be had: the choice is not kept, the problem said",
            steps: [
                (.turn(on: true, port: 47655), [.closeListener, .bind(port: 47655)]),
                (.cannotListen(busy), [.publishAddresses, .answer(busy)]),
            ], mode: .cannotListen, settings: PhoneSettings(), problem: busy),
        Row(
            name: "turned off: closed, published as nowhere, saved off, the problem gone",
            saved: on47655,
            steps: [
                (.turn(on: true, port: nil), [.closeListener, .bind(port: 47655)]),
                (.waitingForCA(waiting), [.publishAddresses, .save(on47655), .answer(waiting)]),
                (.saved(on47655), []),
                (.turn(on: false, port: nil), [.closeListener, .publishAddresses, .save(PhoneSettings(on: false, port: 47655))]),
                (.saved(PhoneSettings(on: false, port: 47655)), [.answer(nil)]),
            ], mode: .off, settings: PhoneSettings(on: false, port: 47655)),
        Row(
            name: "the CA's certificate arrives while waiting: turned on again and served",
            saved: on47655,
            steps: [
                (.turn(on: true, port: nil), [.closeListener, .bind(port: 47655)]),
                (.waitingForCA(waiting), [.publishAddresses, .save(on47655), .answer(waiting)]),
                (.saved(on47655), []),
                (.turn(on: true, port: nil), [.closeListener, .bind(port: 47655)]),
                (.bound(port: 47655), [.publishAddresses, .save(on47655)]),
                (.saved(on47655), [.answer(nil)]),
            ], mode: .serving(port: 47655), settings: on47655),
        Row(
            name: "late news of a turn superseded is ignored: a bind after off, a save of another choice",
            saved: on47655,
            steps: [
                (.turn(on: false, port: nil), [.closeListener, .publishAddresses, .save(PhoneSettings(on: false, port: 47655))]),
                (.bound(port: 47655), []),
                (.waitingForCA(waiting), []),
                (.cannotListen(busy), []),
                (.saved(on47655), []),
                (.saved(PhoneSettings(on: false, port: 47655)), [.answer(nil)]),
            ], mode: .off, settings: PhoneSettings(on: false, port: 47655)),
        // CalDAV (issue 59): the listener is bound while phones or CalDAV are on.
        Row(
            name: "CalDAV turned on with phones off: the listener is bound for it, phones neither served nor published",
            steps: [
                (.calDAV(on: true), [.closeListener, .bind(port: 47655)]),
                (.bound(port: 47655), [.publishAddresses, .save(PhoneSettings())]),
                (.saved(PhoneSettings()), [.answer(nil)]),
            ], mode: .serving(port: 47655), settings: PhoneSettings(), phonesOn: false),
        Row(
            name: "CalDAV turned off with phones off: the listener closed",
            calDAV: true,
            steps: [
                (.calDAV(on: true), [.closeListener, .bind(port: 47655)]),
                (.bound(port: 47655), [.publishAddresses, .save(PhoneSettings())]),
                (.saved(PhoneSettings()), [.answer(nil)]),
                (.calDAV(on: false), [.closeListener, .publishAddresses, .answer(nil)]),
            ], mode: .off, settings: PhoneSettings()),
        Row(
            name: "phones turned off while CalDAV is on: the listener kept, the phones' connections closed, nowhere published",
            saved: on47655, calDAV: true,
            steps: [
                (.turn(on: true, port: nil), [.closeListener, .bind(port: 47655)]),
                (.bound(port: 47655), [.publishAddresses, .save(on47655)]),
                (.saved(on47655), [.answer(nil)]),
                (.turn(on: false, port: nil), [.closeConnections, .publishAddresses, .save(PhoneSettings(on: false, port: 47655))]),
                (.saved(PhoneSettings(on: false, port: 47655)), [.answer(nil)]),
            ], mode: .serving(port: 47655), settings: PhoneSettings(on: false, port: 47655), phonesOn: false),
        Row(
            name: "CalDAV turned on or off while phones are served: the listener is left as it is",
            saved: on47655,
            steps: [
                (.turn(on: true, port: nil), [.closeListener, .bind(port: 47655)]),
                (.bound(port: 47655), [.publishAddresses, .save(on47655)]),
                (.saved(on47655), [.answer(nil)]),
                (.calDAV(on: true), [.answer(nil)]),
                (.calDAV(on: false), [.answer(nil)]),
            ], mode: .serving(port: 47655), settings: on47655),
        Row(
            name: "CalDAV waiting for the household's CA is served when its certificates come (renewed), phones still off",
            steps: [
                (.calDAV(on: true), [.closeListener, .bind(port: 47655)]),
                (.waitingForCA(waiting), [.publishAddresses, .save(PhoneSettings()), .answer(waiting)]),
                (.saved(PhoneSettings()), []),
                (.renew, [.closeListener, .bind(port: 47655)]),
                (.bound(port: 47655), [.publishAddresses, .save(PhoneSettings())]),
                (.saved(PhoneSettings()), [.answer(nil)]),
            ], mode: .serving(port: 47655), settings: PhoneSettings(), phonesOn: false),
        Row(
            name: "new certificates with nothing on: nothing is bound",
            steps: [(.renew, [])], mode: .off, settings: PhoneSettings()),
        Row(
            name: "new certificates under phones served: bound again on the port saved",
            saved: PhoneSettings(on: true, port: 40001),
            steps: [
                (.turn(on: true, port: nil), [.closeListener, .bind(port: 40001)]),
                (.bound(port: 40001), [.publishAddresses, .save(PhoneSettings(on: true, port: 40001))]),
                (.saved(PhoneSettings(on: true, port: 40001)), [.answer(nil)]),
                (.renew, [.closeListener, .bind(port: 40001)]),
                (.bound(port: 40001), [.publishAddresses, .save(PhoneSettings(on: true, port: 40001))]),
                (.saved(PhoneSettings(on: true, port: 40001)), [.answer(nil)]),
            ], mode: .serving(port: 40001), settings: PhoneSettings(on: true, port: 40001)),
        Row(
            name: "CalDAV's port taken: the problem said, CalDAV's choice kept, tried again when turned on again",
            steps: [
                (.calDAV(on: true), [.closeListener, .bind(port: 47655)]),
                (.cannotListen(busy), [.publishAddresses, .answer(busy)]),
                (.calDAV(on: true), [.closeListener, .bind(port: 47655)]),
                (.bound(port: 47655), [.publishAddresses, .save(PhoneSettings())]),
                (.saved(PhoneSettings()), [.answer(nil)]),
            ], mode: .serving(port: 47655), settings: PhoneSettings(), phonesOn: false),
    ]

    @Test(arguments: rows) func eachEventReturnsItsActions(_ row: Row) {
        var life = Life(settings: row.saved, calDAV: row.calDAV)
        for (index, (event, actions)) in row.steps.enumerated() {
            #expect(life.handle(event) == actions, "step \(index + 1): \(event)")
        }
        #expect(life.mode == row.mode)
        #expect(life.settings == row.settings)
        #expect(life.problem == row.problem)
        #expect(life.phonesOn == (row.phonesOn ?? row.settings.on))
    }

    /// Nothing is saved but the choice carried out, and a choice is saved only once.
    @Test func aSaveIsTakenOnlyForTheChoiceBeingCarriedOut() {
        var life = Life(settings: PhoneSettings())
        _ = life.handle(.turn(on: true, port: nil))
        _ = life.handle(.bound(port: 47655))
        #expect(life.handle(.saved(PhoneSettings(on: true, port: 1))) == [])
        #expect(life.settings == PhoneSettings())
        #expect(life.handle(.saved(Self.on47655)) == [.answer(nil)])
        #expect(life.handle(.saved(Self.on47655)) == [], "saved once")
    }
}
