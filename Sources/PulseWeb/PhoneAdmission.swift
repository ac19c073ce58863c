import NIOCore
import NIOHTTP1
import Synchronization

/// Who gets a place on the phones' port (issue 51): a stranger on the Wi-Fi — any number of
/// silent connections, TLS handshakes, slow requests, from many addresses — never takes the
/// places of the family's signed-in phones. Pure: the listener asks it and closes what it
/// says (table-tested in `PhoneAdmissionTests`).
///
/// - At most ``total`` connections, of which at most ``strangers`` not signed in (none of
///   their requests carried a phone's session): the rest are kept for signed-in phones.
/// - At most ``perAddress`` strangers from one address: a new one closes that address's
///   oldest stranger, so a phone that left the Wi-Fi without finishing its handshakes is let
///   in at once when it comes back. Signed-in connections do not count here: two browsers
///   behind one address (a phone's Safari and its installed app, a NAT) never close each
///   other's handshakes (seen: WebKit's page load failed beside a signed-in Chromium).
/// - A new connection when the strangers' places are taken closes a stranger's: the oldest
///   one of the address holding the most of them. A flood from N addresses holds about
///   ``strangers``/N places each, and the phone's own new connection (one, from its
///   address) is the last to go: it would take more than ``strangers`` addresses, each
///   opening a connection within the phone's handshake, to close it.
/// - At most ``signedInPerAddress`` signed-in connections from one address: one more signed
///   in closes the address's oldest idle one (between requests: never a live stream). And
///   when every place is taken, a new connection closes its own address's oldest idle
///   signed-in one. A phone's browser keeps about six connections to a host; the rest are
///   connections it abandoned while its Wi-Fi was gone, which this end cannot tell from idle
///   ones (no reset reached it) and would otherwise hold for ``PhoneDeadlines/idle``: a phone
///   whose Wi-Fi flapped would shut itself, and the family's other phones, out for a minute.
/// - Refused only when every place is a signed-in phone's and none of the new connection's
///   own address is idle.
struct PhoneAdmission<Key: Hashable> {
    static var total: Int { 64 }
    static var strangers: Int { 40 }
    static var perAddress: Int { 8 }
    static var signedInPerAddress: Int { 16 }

    struct Entry {
        let address: String
        var signedIn: Bool
        let order: UInt64
    }
    private(set) var entries: [Key: Entry] = [:]
    private var next: UInt64 = 0

    /// Whether `key` (a new connection from `address`) gets a place, and the connections to
    /// close for it (already counted off). `idle`: whether a connection is between requests.
    mutating func admit(_ key: Key, address: String, idle: (Key) -> Bool = { _ in false }) -> (admitted: Bool, close: [Key]) {
        var close: [Key] = []
        let mine = entries.filter { $0.value.address == address && !$0.value.signedIn }
        if mine.count >= Self.perAddress, let oldest = Self.oldest(mine, strangersFirst: true) {
            entries[oldest] = nil
            close.append(oldest)
        }
        let strangers = entries.filter { !$0.value.signedIn }
        if strangers.count >= Self.strangers || entries.count >= Self.total {
            // The address holding the most strangers (ties: the one whose oldest is oldest).
            let byAddress = Dictionary(grouping: strangers, by: { $0.value.address })
            let crowded = byAddress.max { a, b in
                a.value.count != b.value.count
                    ? a.value.count < b.value.count
                    : (a.value.map(\.value.order).min() ?? 0) > (b.value.map(\.value.order).min() ?? 0)
            }
            if let crowded, let oldest = Self.oldest(Dictionary(uniqueKeysWithValues: crowded.value.map { ($0.key, $0.value) }), strangersFirst: false) {
                entries[oldest] = nil
                close.append(oldest)
            }
        }
        if entries.count >= Self.total, let own = oldestIdleSignedIn(of: address, idle: idle) {
            entries[own] = nil
            close.append(own)
        }
        guard entries.count < Self.total else { return (false, close) }
        entries[key] = Entry(address: address, signedIn: false, order: next)
        next += 1
        return (true, close)
    }

    /// A request on `key` carried a phone's session: from now on it is the family's. Returns
    /// the connections to close for it (already counted off): its address's oldest idle
    /// signed-in one when the address now holds more than ``signedInPerAddress``.
    @discardableResult
    mutating func signedIn(_ key: Key, idle: (Key) -> Bool = { _ in false }) -> [Key] {
        guard let entry = entries[key], !entry.signedIn else { return [] }
        entries[key]?.signedIn = true
        let held = entries.values.count(where: { $0.signedIn && $0.address == entry.address })
        guard held > Self.signedInPerAddress, let oldest = oldestIdleSignedIn(of: entry.address, idle: { $0 != key && idle($0) }) else { return [] }
        entries[oldest] = nil
        return [oldest]
    }

    private func oldestIdleSignedIn(of address: String, idle: (Key) -> Bool) -> Key? {
        entries.filter { $0.value.signedIn && $0.value.address == address && idle($0.key) }.min { $0.value.order < $1.value.order }?.key
    }

    /// `key` closed (nothing when it was closed for another already).
    mutating func closed(_ key: Key) { entries[key] = nil }

    func signedIn(of key: Key) -> Bool { entries[key]?.signedIn ?? false }

    private static func oldest(_ entries: [Key: Entry], strangersFirst: Bool) -> Key? {
        let pool = strangersFirst && entries.contains(where: { !$0.value.signedIn }) ? entries.filter { !$0.value.signedIn } : entries
        return pool.min { $0.value.order < $1.value.order }?.key
    }
}

/// A phone connection's state as its pipeline and the listener share it: whether it signed in
/// (a request carried a phone's session: set by the listener, read by ``PhoneDeadlines`` to
/// choose how long the connection may stay idle), and whether it is idle (an answer ended and
/// no next request begun: set by ``PhoneDeadlines``, read by ``PhoneAdmission`` through the
/// listener, which closes only idle signed-in connections).
final class SignedIn: Sendable {
    private let value = Atomic(false)
    private let between = Atomic(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
    var isIdle: Bool { between.load(ordering: .acquiring) }
    func idle(_ idle: Bool) { between.store(idle, ordering: .releasing) }
}

/// The phones' port's time limits (issue 51), on HTTP parts, not bytes, so that trickled
/// bytes never keep a connection open:
/// - the first request complete (TLS handshake, head and body) within ``first`` of the
///   connection;
/// - after an answer, the next request's whole head within the idle limit — ``strangerIdle``
///   for a connection that never signed in, ``idle`` for a signed-in phone's — and then its
///   body within ``request``.
/// A live stream's answer never ends: no limit here while it runs (its pings and the
/// connection's idle handler keep watch).
final class PhoneDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart
    static let first = TimeAmount.seconds(5)
    static let request = TimeAmount.seconds(10)
    static let strangerIdle = TimeAmount.seconds(4)
    static let idle = TimeAmount.seconds(60)

    private let signedIn: SignedIn
    private var timer: Scheduled<Void>?
    private var first = true

    init(signedIn: SignedIn) { self.signedIn = signedIn }

    private func arm(_ context: ChannelHandlerContext, _ limit: TimeAmount) {
        timer?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: limit) { AbruptClose.close(loopBound.value) }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }

    func handlerAdded(context: ChannelHandlerContext) { arm(context, Self.first) }

    func handlerRemoved(context: ChannelHandlerContext) { disarm() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            signedIn.idle(false)
            // The first request keeps its deadline from the connection's start.
            if !first { arm(context, Self.request) }
        case .body: break
        case .end:
            first = false
            disarm() // our turn: the answer is not the client's to hurry
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            arm(context, signedIn.isSet ? Self.idle : Self.strangerIdle)
            signedIn.idle(true)
        }
        context.write(data, promise: promise)
    }
}

/// First in a phone connection's pipeline: closes the socket at once when asked
/// (``close(_:)``), without TLS's goodbye. A connection closed for a stranger's flood or a
/// missed deadline would otherwise wait for the peer's close_notify, holding its descriptor
/// for the TLS shutdown's timeout, and a flood of hundreds of connections a second would hold
/// hundreds (measured: ~350 with a one-second timeout).
final class AbruptClose: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    struct Event: Sendable {}

    /// Closes `channel` at once (from any thread).
    static func close(_ channel: any Channel) { channel.triggerUserOutboundEvent(Event(), promise: nil) }
    static func close(_ context: ChannelHandlerContext) { context.triggerUserOutboundEvent(Event(), promise: nil) }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if event is Event { context.close(mode: .all, promise: promise) } else { context.triggerUserOutboundEvent(event, promise: promise) }
    }
}
