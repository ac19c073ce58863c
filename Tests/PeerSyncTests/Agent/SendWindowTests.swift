import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PeerSync

/// The sender's ACK window: at most `limit` BATCHes unacknowledged.
@Suite struct SendWindowTests {
    @Test func waitsForAnAckOnlyWhenTheWindowIsFull() async {
        let (acks, ack) = AsyncStream<Void>.makeStream()
        var window = PeerSession.Window(limit: 2, acks: acks.makeAsyncIterator())
        #expect(await window.waitForRoom()) // empty: no wait
        window.inFlight = 1
        #expect(await window.waitForRoom()) // one in flight, room for another
        #expect(window.inFlight == 1)
        window.inFlight = 2
        ack.yield() // the peer's ACK of the first batch
        #expect(await window.waitForRoom())
        #expect(window.inFlight == 1)
        window.inFlight = 3
        ack.yield(); ack.yield()
        #expect(await window.waitForRoom())
        #expect(window.inFlight == 1) // consumed exactly what it needed
    }

    @Test func aFullWindowGivesUpWhenTheSessionEnds() async {
        let (acks, ack) = AsyncStream<Void>.makeStream()
        var window = PeerSession.Window(limit: 1, acks: acks.makeAsyncIterator())
        window.inFlight = 1
        ack.finish()
        #expect(await window.waitForRoom() == false)
    }
}
