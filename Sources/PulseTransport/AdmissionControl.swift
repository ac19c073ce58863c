import Synchronization

/// Bounds what strangers can make the agent hold before they prove anything: at most
/// `perAddress` connections from one address and `total` in all may be waiting for their
/// handshake (TLS, then HELLO or pairing); more are closed on accept. A connection leaves
/// the count when its peer is authenticated or when it closes. (With the 512-byte frame
/// limit before HELLO and the 10 s handshake deadline, this bounds a flood's memory:
/// docs/SECURITY.md.)
public final class AdmissionControl: Sendable {
    public static let defaultPerAddress = 8
    public static let defaultTotal = 64

    let perAddress: Int
    let total: Int
    private let state = Mutex<(byAddress: [String: Int], total: Int, refused: UInt64)>(([:], 0, 0))

    public init(perAddress: Int = AdmissionControl.defaultPerAddress, total: Int = AdmissionControl.defaultTotal) {
        self.perAddress = perAddress
        self.total = total
    }

    /// A place for a new connection from `address`, or nil (close it).
    public func admit(_ address: String) -> AdmissionTicket? {
        let admitted = state.withLock { state -> Bool in
            guard state.total < total, state.byAddress[address, default: 0] < perAddress else {
                state.refused += 1
                return false
            }
            state.total += 1
            state.byAddress[address, default: 0] += 1
            return true
        }
        return admitted ? AdmissionTicket(control: self, address: address) : nil
    }

    /// Connections waiting for their handshake now, and connections refused since start.
    public var counts: (waiting: Int, refused: UInt64) { state.withLock { ($0.total, $0.refused) } }

    fileprivate func release(_ address: String) {
        state.withLock { state in
            state.total -= 1
            let left = state.byAddress[address, default: 1] - 1
            state.byAddress[address] = left > 0 ? left : nil
        }
    }
}

/// One admitted connection's place; released once (the first call wins).
public final class AdmissionTicket: Sendable {
    private let control: AdmissionControl
    private let address: String
    private let released = Atomic(false)

    fileprivate init(control: AdmissionControl, address: String) {
        self.control = control
        self.address = address
    }

    public func release() {
        if !released.exchange(true, ordering: .relaxed) { control.release(address) }
    }
}
