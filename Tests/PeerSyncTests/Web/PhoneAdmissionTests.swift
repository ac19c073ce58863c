import FoundationEssentials
import Testing

@testable import PulseWeb

/// Who gets a place on the phones' port (issue 51), without sockets: a flood of strangers
/// from any number of addresses never takes a signed-in phone's place, nor the place of a
/// phone's new connection, and holds at most ``PhoneAdmission/strangers`` descriptors.
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

    @Test func oneAddressHoldsAtMostEightAndItsOldestStrangerGoesFirst() {
        var admission = Admission()
        _ = admission.admit(1, address: "a")
        admission.signedIn(1)
        for key in 2...8 { #expect(admission.admit(key, address: "a") == (true, [])) }
        // The ninth closes the address's oldest stranger (2), not its signed-in 1.
        #expect(admission.admit(9, address: "a") == (true, [2]))
        #expect(admission.entries.count == 8)
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
        let told = WebRouter.phoneStatus(status)
        let text = String(decoding: try JSONEncoder().encode(told), as: UTF8.self)
        for secret in ["3fa2c1d0", "77aa", "88bb", "Study PC", "192.168", "Kitchen"] { #expect(!text.contains(secret), "\(secret) in \(text)") }
        #expect(text.contains("connected") && text.contains("\"problem\":true"))
    }
}
