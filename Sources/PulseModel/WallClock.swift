import FoundationEssentials

/// The wall clock in Unix milliseconds: the one place the program reads it. Whatever
/// stamps, expires or ages something takes a clock (`@Sendable () -> Int64`, this one by
/// default), so a test gives it another; a whole process is put at another time with
/// libfaketime (Tests/TwoPeerTests, `FakeTime`).
public enum WallClock {
    /// Now, in milliseconds since 1970-01-01 UTC.
    @Sendable public static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The system clock, as the closure the clocked types take.
    public static let system: @Sendable () -> Int64 = { now() }
}
