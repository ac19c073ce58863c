import Foundation
import Testing
@testable import PulseCalDAV

/// Signing in to CalDAV (decision 0025): Basic credentials read strictly, wrong ones counted
/// per client with the PIN's backoff, one home's IPv6 devices counted as one.
@Suite struct DAVSignInTests {
    static func basic(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }

    @Test(arguments: [
        (basic("Anna:abcd-efgh-ijkm-npqr-stuv"), DAVCredentials(user: "Anna", password: "abcd-efgh-ijkm-npqr-stuv")),
        ("basic " + Data("Zoë:a:b".utf8).base64EncodedString(), DAVCredentials(user: "Zoë", password: "a:b")),
        (basic("Anna:x") + "  ", DAVCredentials(user: "Anna", password: "x")),
        ("Bearer abc", nil),
        ("Basic", nil),
        ("Basic !!!", nil),
        (basic("Anna"), nil),
        (basic(":secret"), nil),
        (basic("Anna:"), nil),
        (basic("An\u{1}na:x"), nil),
        ("Basic " + Data([0x41, 0x3A, 0xFF]).base64EncodedString(), nil),
        (basic("Anna:" + String(repeating: "x", count: 1000)), nil),
    ])
    func basicCredentialsAreReadStrictly(header: String, credentials: DAVCredentials?) {
        #expect(DAVCredentials(header: header) == credentials, "\(header.prefix(40))")
    }

    @Test func theThirdWrongPasswordInARowWaitsFiveSecondsDoublingToFifteenMinutes() {
        var limiter = DAVSignInLimiter()
        let stranger = "192.168.1.66", family = "192.168.1.20"
        var now: Int64 = 1_000_000
        limiter.failed(stranger, now: now)
        limiter.failed(stranger, now: now)
        #expect(limiter.wait(for: stranger, now: now) == nil, "two wrong ones: no wait yet")
        limiter.failed(stranger, now: now)
        #expect(limiter.wait(for: stranger, now: now) == 5_000)
        #expect(limiter.wait(for: family, now: now) == nil, "another client is not held back")
        now += 5_000
        #expect(limiter.wait(for: stranger, now: now) == nil)
        var delays: [Int64] = []
        for _ in 0..<12 {
            limiter.failed(stranger, now: now)
            delays.append(limiter.wait(for: stranger, now: now) ?? 0)
            now += delays.last!
        }
        #expect(delays == [10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 900_000, 900_000, 900_000, 900_000, 900_000])
        limiter.succeeded(stranger)
        #expect(limiter.wait(for: stranger, now: now) == nil)
        limiter.failed(stranger, now: now)
        #expect(limiter.wait(for: stranger, now: now) == nil, "counted again from nothing")
    }

    @Test func oneHomesIPv6DevicesCountAsOneAndTheOldestClientIsForgottenFirst() {
        #expect(DAVSignInLimiter.key("fd00:1:2:3::5") == DAVSignInLimiter.key("fd00:1:2:3:aaaa:bbbb:cccc:dddd"))
        #expect(DAVSignInLimiter.key("fe80::1%eth0") == "fe80:0:0:0::/64")
        #expect(DAVSignInLimiter.key("fd00:1:2:4::5") != DAVSignInLimiter.key("fd00:1:2:3::5"))
        var limiter = DAVSignInLimiter(capacity: 3)
        for (index, address) in ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"].enumerated() {
            for _ in 0..<3 { limiter.failed(address, now: Int64(index)) }
        }
        #expect(limiter.entries.count == 3)
        #expect(limiter.wait(for: "10.0.0.1", now: 4) == nil, "the oldest forgotten")
        #expect(limiter.wait(for: "10.0.0.4", now: 4) != nil)
    }
}
