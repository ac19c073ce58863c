import Testing
@testable import PulseModel

@Suite struct VersionVectorTests {
    let a = ReplicaID(rawValue: 1), b = ReplicaID(rawValue: 2), c = ReplicaID(rawValue: 3)

    @Test func equalVectors() {
        #expect(VersionVector([a: 3, b: 1]).compare(to: VersionVector([b: 1, a: 3])) == .equal)
        #expect(VersionVector().compare(to: VersionVector()) == .equal)
        // A zero entry is the same as no entry.
        #expect(VersionVector([a: 2, c: 0]).compare(to: VersionVector([a: 2])) == .equal)
    }

    @Test func aheadAndBehind() {
        let small = VersionVector([a: 3])
        let big = VersionVector([a: 3, b: 1])
        #expect(big.compare(to: small) == .greater)
        #expect(small.compare(to: big) == .lesser)
        #expect(VersionVector([a: 4]).compare(to: small) == .greater)
        #expect(VersionVector().compare(to: small) == .lesser)
    }

    @Test func concurrentVectors() {
        let left = VersionVector([a: 3, b: 1])
        let right = VersionVector([a: 2, b: 2])
        #expect(left.compare(to: right) == .concurrent)
        #expect(right.compare(to: left) == .concurrent)
        #expect(VersionVector([a: 1]).compare(to: VersionVector([b: 1])) == .concurrent)
    }

    @Test func mergeIsPointwiseMaximum() {
        let merged = VersionVector([a: 3, b: 1]).merging(VersionVector([a: 2, b: 5, c: 1]))
        #expect(merged == VersionVector([a: 3, b: 5, c: 1]))
        #expect(merged.compare(to: VersionVector([a: 3, b: 1])) == .greater)
    }

    @Test func missingCountsWhatTheOtherSideHasMore() {
        let mine = VersionVector([a: 10, b: 2])
        let theirs = VersionVector([a: 4, b: 7, c: 3])
        #expect(mine.missing(from: theirs) == 5 + 3)
        #expect(theirs.missing(from: mine) == 6)
        #expect(mine.missing(from: mine) == 0)
    }

    @Test func replicaIDHexRoundTrip() {
        let id = ReplicaID(rawValue: 0xDEAD_BEEF_0000_0001)
        #expect(id.description == "deadbeef00000001")
        #expect(ReplicaID(hex: id.description) == id)
        #expect(ReplicaID(hex: "0000000000000000") == nil)
        #expect(ReplicaID(hex: "xyz") == nil)
        #expect(ReplicaID(storage: id.storage) == id)
    }
}
