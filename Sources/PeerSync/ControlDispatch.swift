import FoundationEssentials
import PulseModel
import PulseProtocol
import PulseStore

/// The control socket's requests (docs/API.md, "Operations"), one `op` each: the agent's
/// status, a CLI's notice, a household method for the control socket's caller, a sign-in link
/// for the page, a wait on a condition, an invitation for another computer.
extension PeerAgent {
    func handle(_ request: ControlRequest, context: Context, port: Int) async -> ControlResponse {
        switch request.op {
        case "status":
            do {
                return ControlResponse(ok: true, status: try await status(context, port: port))
            } catch {
                return .failed(error)
            }
        case "changed": // the notice of a CLI of an earlier release (now `changed.fifo`)
            await localChange(context)
            return ControlResponse(ok: true)
        case "call":
            guard let method = request.method else { return .refused(.missingParameter, ["method": "call", "key": "method", "type": "string"]) }
            return await call(method, request.params ?? [:], as: .control, context: context)
        case "open":
            // A login for the web page: only the machine's owner reaches this socket.
            guard let url = context.frontEnds.url else {
                return .refused(.noWebPage, ["reason": .string(context.frontEnds.problem ?? "off")])
            }
            return ControlResponse(
                ok: true,
                result: .object([
                    "url": .string(url), "login": .string("\(url)/login?token=\(context.logins.issue())"),
                    "expires": .integer(WallClock.now() + FrontEndLogins.lifetime),
                ]))
        case "wait":
            guard let condition = request.until else { return .refused(.missingParameter, ["method": "wait", "key": "until", "type": "string"]) }
            let timeout = Duration.milliseconds(min(max(request.timeoutMilliseconds ?? 30_000, 0), 3_600_000))
            await context.engine.adjustPendingWaits(1)
            let response: ControlResponse
            do {
                response = try await waitFor(condition, timeout: timeout, context: context, port: port)
            } catch {
                response = .failed(error)
            }
            await context.engine.adjustPendingWaits(-1)
            return response
        case "invite":
            return await invite(member: request.member, minutes: request.minutes ?? Invitation.defaultMinutes, context: context)
        default:
            return .refused(.unknownOp, ["op": .string(request.op), "known": ["status", "changed", "wait", "call", "invite", "subscribe", "open"]])
        }
    }

    /// Opens a pairing invitation (replacing the open one): its code, expiry and attempts,
    /// for `pulse-peer invite` and the page's "Add a computer" alike.
    func invite(member: String?, minutes: Int, context: Context) async -> ControlResponse {
        do {
            guard Invitation.minutes.contains(minutes) else {
                return .refused(.inviteMinutes, ["min": JSONValue(Invitation.minutes.lowerBound), "max": JSONValue(Invitation.minutes.upperBound)])
            }
            // No member named: the invitation suggests nobody (the joining computer says who uses
            // it; it used to become the inviter's, and its person was never told of anything).
            let member = try await context.store.memberID(named: member)
            let invitation = context.invitations.open(memberID: member, lifetime: Int64(minutes) * 60_000)
            context.logger.notice("pairing invitation opened", metadata: ["minutes": "\(minutes)"])
            return ControlResponse(
                ok: true,
                result: .object([
                    "code": .string(PairingCode.display(invitation.code)), "expires": .integer(invitation.expires),
                    "attempts": .integer(Int64(invitation.attemptsLeft)),
                ]))
        } catch {
            return .failed(error)
        }
    }

    /// A household method for the control socket and the front ends alike.
    func call(_ method: String, _ params: [String: JSONValue], as caller: APICaller, context: Context) async -> ControlResponse {
        if caller.audience != .phone, HouseholdAPI.registry[method] == nil, let frontEndMethod = context.frontEndMethods[method] {
            return await frontEndMethod.run(params)
        }
        do {
            // What it wrote, if anything, is told by ``StoreService/localWrites``.
            let result = try await context.store.call(method, params, as: caller)
            return ControlResponse(ok: true, result: result)
        } catch {
            return .failed(error)
        }
    }

    /// Re-judges the status after every change of the peer table or the store, until
    /// `condition` holds or `timeout` passes.
    func waitFor(_ condition: WaitCondition, timeout: Duration, context: Context, port: Int) async throws -> ControlResponse {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = await context.engine.generation
            let current = try await status(context, port: port)
            if condition.isMet(by: current) { return ControlResponse(ok: true, status: current) }
            let remaining = deadline - ContinuousClock.now
            if Task.isCancelled { return .refused(.agentStopping, status: current) }
            guard remaining > .zero else {
                return .refused(
                    .timedOut,
                    [
                        "seconds": .number(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18),
                        "condition": .string(condition.kind.rawValue),
                    ], status: current)
            }
            // Both children end on cancellation, so the group never outlives the wait.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await context.engine.changed(after: seen) }
                group.addTask { try? await LoopTimer.sleep(for: remaining) }
                await group.next()
                group.cancelAll()
            }
        }
    }
}
