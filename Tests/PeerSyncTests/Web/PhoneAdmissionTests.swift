import FoundationEssentials
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import PulseWeb

/// Who gets a place on the phones' port (issue 51), without sockets: a flood of strangers
/// from any number of addresses never takes a signed-in phone's place, nor the place of a
/// phone's new connection, and holds at most ``PhoneAdmission/strangers`` descriptors; a
/// phone's connections it dropped unseen never shut it or another phone out.
struct PhoneAdmissionTests {
    typealias Admission = PhoneAdmission<Int>

    @Test func aFloodFromFifteenAddressesNeverClosesASignedInPhoneOrItsNewConnection() {
        var admission = Admission()
        var key = 0
        func open(_ address: String) -> (Bool, [Int]) {
            key += 1
            return admission.admit(key, address: address)
        }
        // The phone's six connections, signed in.
        var phone: [Int] = []
        for _ in 0..<6 {
            let (admitted, _) = open("10.0.0.2")
            #expect(admitted)
            phone.append(key)
            admission.signedIn(key)
        }
        // 1 000 connections from 15 addresses, round robin; then the phone opens one more,
        // and the flood goes on.
        var closed: Set<Int> = []
        for n in 0..<1000 { closed.formUnion(open("10.9.0.\(n % 15)").1) }
        let (admitted, displaced) = open("10.0.0.2")
        #expect(admitted && displaced.allSatisfy { !phone.contains($0) })
        let newConnection = key
        for n in 0..<60 { closed.formUnion(open("10.9.0.\(n % 15)").1) }
        #expect(closed.isDisjoint(with: phone + [newConnection]), "the flood closed none of the phone's connections")
        #expect(admission.entries[newConnection] != nil)
        let strangers = admission.entries.values.filter { !$0.signedIn }.count
        #expect(strangers <= Admission.strangers && admission.entries.count <= Admission.total)
        #expect(admission.entries.values.filter { $0.address.hasPrefix("10.9.") }.count < Admission.strangers)
    }

    @Test func oneAddressHoldsAtMostEightStrangersAndItsOldestGoesFirst() {
        var admission = Admission()
        for key in 1...4 {
            _ = admission.admit(key, address: "a")
            admission.signedIn(key)
        }
        // Eight strangers beside the address's four signed-in connections (a second browser
        // loading the page beside a signed-in one): none closes another.
        for key in 5...12 { #expect(admission.admit(key, address: "a") == (true, [])) }
        // The ninth stranger closes the address's oldest stranger (5), never a signed-in one.
        #expect(admission.admit(13, address: "a") == (true, [5]))
        #expect(admission.entries.count == 12)
    }

    @Test func onlySignedInPhonesFillingEveryPlaceRefuseANewConnection() {
        var admission = Admission()
        for key in 0..<Admission.total {
            #expect(admission.admit(key, address: "p\(key / Admission.perAddress)").admitted)
            admission.signedIn(key)
        }
        #expect(admission.admit(1000, address: "stranger") == (false, []))
        admission.closed(0)
        #expect(admission.admit(1001, address: "stranger") == (true, []))
        #expect(admission.admit(1002, address: "stranger") == (true, [1001]), "full again: the newer stranger takes the older's place")
    }

    @Test func aPhoneWhoseWiFiFlappedHoldsAtMostSixteenSignedInAndKeepsItsLiveStream() {
        var admission = Admission()
        var idle: Set<Int> = []
        var closed: [Int] = []
        // Key 0: the page's live stream (never idle); then 40 connections the phone signed in
        // with and abandoned, each idle once answered.
        for key in 0...40 {
            #expect(admission.admit(key, address: "phone", idle: idle.contains).admitted)
            closed += admission.signedIn(key, idle: idle.contains)
            if key > 0 { idle.insert(key) }
        }
        #expect(closed == Array(1...25), "the oldest idle ones, in order: \(closed)")
        #expect(admission.entries.count == Admission.signedInPerAddress && admission.entries[0] != nil)
        // Another phone's connection is never closed for it.
        #expect(admission.admit(100, address: "other").admitted)
        #expect(admission.signedIn(100, idle: { _ in true }) == [])
    }

    @Test func everyPlaceSignedInANewConnectionClosesItsOwnAddresssOldestIdleOneAndAStrangerIsRefused() {
        var admission = Admission()
        for key in 0..<Admission.total {
            #expect(admission.admit(key, address: "p\(key / Admission.perAddress)").admitted)
            admission.signedIn(key)
        }
        let idle: (Int) -> Bool = { $0 != 0 } // key 0, p0's oldest, is answering a request
        #expect(admission.admit(1000, address: "p0", idle: idle) == (true, [1]))
        admission.signedIn(1000)
        #expect(admission.admit(1001, address: "stranger", idle: idle) == (false, []), "no stranger takes a phone's place")
        #expect(admission.admit(1002, address: "p1", idle: { _ in false }) == (false, []), "busy ones are never closed")
    }

    @Test func aClosedConnectionFreesItsPlace() {
        var admission = Admission()
        #expect(admission.admit(1, address: "a").admitted)
        admission.closed(1)
        admission.closed(1)
        #expect(admission.entries.isEmpty)
    }
}

/// What a phone reads of the agent's status (issue 51): whether the computers are connected
/// and in sync, never their ids, names or addresses.
struct PhoneStatusTests {
    @Test func aPhoneIsToldNoMachineIdNameOrAddress() throws {
        let status = Data(
            #"{"machine":{"id":"3fa2c1d0","name":"Kitchen"},"peers":[{"machineID":"77aa","name":"Study PC","address":"192.168.1.20:47653","state":"connected","inSync":true},{"machineID":"88bb","state":"connecting","inSync":false,"problem":"peer at 192.168.1.30 refused"}]}"#
                .utf8)
        let told = PhoneSite.phoneStatus(status)
        let text = String(decoding: try JSONEncoder().encode(told), as: UTF8.self)
        for secret in ["3fa2c1d0", "77aa", "88bb", "Study PC", "192.168", "Kitchen"] { #expect(!text.contains(secret), "\(secret) in \(text)") }
        #expect(text.contains("connected") && text.contains("\"problem\":true"))
    }
}

/// The phones' port's time limits (issue 51), on an embedded channel with its own clock:
/// counted on HTTP parts, so bytes trickled into a request never extend them, and short for a
/// connection that never signed in.
struct PhoneDeadlinesTests {
    func channel(signedIn: Bool = false) throws -> (EmbeddedChannel, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        let flag = SignedIn()
        if signedIn { flag.set() }
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandlers([AbruptClose(), PhoneDeadlines(signedIn: flag)])
        try channel.connect(to: SocketAddress(ipAddress: "10.0.0.2", port: 1)).wait()
        return (channel, loop)
    }

    static let head = HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/api/call/shop.add"))

    @Test func aConnectionThatSendsNoWholeRequestIsClosedAfterFiveSeconds() throws {
        let (channel, loop) = try channel()
        loop.advanceTime(by: .milliseconds(4_900))
        #expect(channel.isActive)
        loop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
    }

    @Test func aBodyTrickledAfterItsHeadHasTenSecondsInAll() throws {
        let (channel, loop) = try channel(signedIn: true)
        try channel.writeInbound(Self.head)
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        loop.advanceTime(by: .seconds(1))
        try channel.writeInbound(Self.head)
        for _ in 0..<9 {
            loop.advanceTime(by: .seconds(1))
            try channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(string: "x")))
        }
        #expect(channel.isActive)
        loop.advanceTime(by: .milliseconds(1_100))
        #expect(!channel.isActive, "ten seconds after its head, however many bytes came")
    }

    @Test func aStrangerIdlesFourSecondsAfterAnAnswerAndASignedInPhoneAMinute() throws {
        for signedIn in [false, true] {
            let (channel, loop) = try channel(signedIn: signedIn)
            try channel.writeInbound(Self.head)
            try channel.writeInbound(HTTPServerRequestPart.end(nil))
            loop.advanceTime(by: .seconds(30))
            #expect(channel.isActive, "answering takes what it takes")
            try channel.writeOutbound(HTTPServerResponsePart.end(nil))
            loop.advanceTime(by: .milliseconds(4_100))
            #expect(channel.isActive == signedIn)
            loop.advanceTime(by: .seconds(56))
            #expect(!channel.isActive)
        }
    }
}
