#if DEBUG
#if canImport(Glibc)
import Glibc
#endif

/// The "next" test release (issue 53's tests of two releases in one household,
/// Tests/TwoPeerTests/TwoReleasesTests.swift): a debug build started with
/// `PULSE_NEXT_RELEASE=1` is a later release than this tree — a `note` entity, a shopping item's
/// `brand`, their migration and two API methods more, and no protocol change. Read once, at
/// the first use, so one process is one release throughout. A release build (`-c release`, the
/// .deb) has none of it: the switch, the entity and the methods are compiled out.
public enum TestRelease {
    public static let next: Bool = {
        guard let value = getenv("PULSE_NEXT_RELEASE") else { return false }
        return String(cString: value) == "1"
    }()
}
#endif
