// FlowEngine+links: deep links — resolving a URI, following it as a cold start would, deferring it, cancelling it.

import JSON

extension FlowEngine {
    /// Finds the link of the root flow that `uri` opens, with its captured values typed and
    /// substituted into its actions.
    ///
    /// When several patterns match, the one with the most literal path segments wins, then the
    /// one with more query keys, then more literal query values, then one that names a scheme
    /// and host, then the one with a literal where the other has a placeholder, first place
    /// first; then the first declared.
    ///
    /// ```swift
    /// let match = try FlowEngine.resolveLink("myapp://x/home/1", catalog: catalog)
    /// match.pattern   // "/home/{tab}"
    /// match.params    // ["tab": 1]
    /// match.actions   // [FlowAction(type: "home.selectTab", params: ["index": 1])]
    /// ```
    ///
    /// - Parameter field: the JSON Pointer of the URI in the request, for errors: `/params/uri`
    ///   in a `link` action, `/link` when a session is created with one.
    /// - Throws: ``FlowError/invalidParams(path:message:)`` at `field` for a malformed URI or a
    ///   value that does not convert to its placeholder's type (`/home/abc` for an integer);
    ///   ``FlowError/unknownLink(uri:)`` when no pattern matches.
    public static func resolveLink(_ uri: String, catalog: FlowCatalog, field: String = "/params/uri") throws(FlowError) -> LinkMatch {
        let parsed: LinkURI
        switch LinkURI.parse(uri) {
        case .success(let value): parsed = value
        case .failure(let error):
            throw .invalidParams(path: field, message: "\(error.message); found \(JSONValue.string(uri).abbreviatedJSON(limit: 80))")
        }
        let links = catalog[FlowCatalog.rootFlowName]?.links ?? []
        var best: (index: Int, link: FlowLink, captures: [(name: String, value: String)])?
        for (index, link) in links.enumerated() {
            guard let captures = link.pattern.captures(parsed) else { continue }
            if let current = best, !link.pattern.isMoreSpecific(than: current.link.pattern) { continue }
            best = (index, link, captures)
        }
        guard let best else { throw .unknownLink(uri: uri) }
        let pattern = best.link.pattern.text
        var params = JSONObject()
        for capture in best.captures {
            let type = best.link.type(of: capture.name)
            guard let value = linkValue(capture.value, as: type) else {
                throw .invalidParams(
                    path: field,
                    message: "placeholder {\(capture.name)} of link \(pattern) must be \(type.article) \(type.rawValue); found \(JSONValue.string(capture.value).abbreviatedJSON(limit: 40))")
            }
            params[capture.name] = value
        }
        var actions: [FlowAction] = []
        actions.reserveCapacity(best.link.actions.count)
        for action in best.link.actions {
            guard case .object(let substituted) = try substitute(.object(action.params), with: params, pattern: pattern) else { continue }
            actions.append(FlowAction(type: action.type, params: substituted))
        }
        return LinkMatch(pattern: pattern, index: best.index, params: params, actions: actions, when: best.link.when)
    }

    /// Follows the link `uri` opens, in a running session (`tree`) or a new one (`nil`).
    ///
    /// When the link's `when` holds, the stack is rebuilt as a cold start for `context` would
    /// build it, with ids from the old tree's `nextId` (an id the client saw is never given
    /// again), then the link's actions apply in order through the delegate chain, each seeing
    /// the user state the earlier ones set. All or nothing: any refusal is
    /// ``FlowError/linkRefused(pattern:step:action:underlying:)`` and nothing changes. The
    /// result has no pending link.
    ///
    /// When `when` does not hold, the link is kept as the tree's ``FlowTree/pendingLink``
    /// (replacing an older one) and nothing moves; ``apply(_:to:catalog:context:limits:)``
    /// follows it after the first action that makes it hold.
    ///
    /// The transition goes from the old top to the linked top. When the screens before the
    /// link's last action are the screens the user saw (same flows, features and params), the
    /// link only adds that action's step to what is shown, and the transition is that action's
    /// (a `present`, a `selectTab`); otherwise it is `replaceRoot` with style `crossFade`, not
    /// animated when the screens shown are the same as before. A new session has none.
    ///
    /// ```swift
    /// let outcome = try FlowEngine.followLink("/modal/Hi", from: tree, catalog: catalog, context: context)
    /// outcome.tree.screens.map(\.feature)   // ["home.first", "modal"]
    /// outcome.transition?.type               // .present
    /// ```
    ///
    /// - Throws: what ``resolveLink(_:catalog:field:)`` throws; `interactionPending` while an
    ///   interaction is open; `linkRefused`; `brokenDefinition` when the cold start cannot build.
    public static func followLink(
        _ uri: String, from tree: FlowTree?, catalog: FlowCatalog, context: FlowContext,
        limits: FlowLimits = .default, field: String = "/params/uri"
    ) throws(FlowError) -> LinkOutcome {
        if let tree {
            guard tree.nextId >= 1, tree.nextId <= maxId else {
                throw .corruptTree(message: "nextId \(tree.nextId) is outside 1...\(maxId)")
            }
            if let interaction = tree.interaction {
                throw .interactionPending(action: FlowAction.link, pending: interaction.action.type)
            }
        }
        let match = try resolveLink(uri, catalog: catalog, field: field)
        return try follow(match, uri: uri, from: tree, catalog: catalog, context: context, limits: limits)
    }

    static func follow(
        _ match: LinkMatch, uri: String, from tree: FlowTree?, catalog: FlowCatalog, context: FlowContext, limits: FlowLimits
    ) throws(FlowError) -> LinkOutcome {
        guard match.holds(in: context) else {
            var kept: FlowTree
            if let tree {
                kept = tree
            } else {
                kept = try start(catalog: catalog, context: context, limits: limits)
            }
            kept.pendingLink = PendingLink(uri: uri, pattern: match.pattern)
            return LinkOutcome(match: match, deferred: true, tree: kept, transition: nil, handledBy: FlowCatalog.rootFlowName)
        }
        let rebuilt = try rebuild(match, firstId: tree?.nextId ?? 1, catalog: catalog, context: context, limits: limits)
        let transition = tree.flatMap { linkTransition(from: $0, to: rebuilt) }
        return LinkOutcome(
            match: match, deferred: false, tree: rebuilt.tree, transition: transition, handledBy: rebuilt.handledBy,
            userChanges: rebuilt.userChanges)
    }

    // MARK: generic actions

    /// `link {uri}` and `link.cancel`, which every flow understands.
    static func applyLinkAction(
        _ action: FlowAction, to tree: FlowTree, catalog: FlowCatalog, context: FlowContext, limits: FlowLimits
    ) throws(FlowError) -> ActionOutcome {
        guard let top = tree.top else { throw .corruptTree(message: "no screen is on top") }
        if let from = action.from { try checkSource(from, top: top) }
        if action.interactive {
            throw .invalidParams(path: "/interactive", message: "\(action.type) cannot be interactive; post it without \"interactive\": true")
        }
        // A link taps no row: refused, as `interactive` is, rather than carried unchecked.
        if action.row != nil {
            throw .invalidParams(path: "/row", message: "\(action.type) taps no row; post it without \"row\"")
        }
        if action.type == FlowAction.linkCancel {
            if let member = action.params.members.first {
                throw .invalidParams(
                    path: JSONPointer(["params", member.key]).description,
                    message: "link.cancel takes no params; found \(JSONValue.string(member.key).abbreviatedJSON())")
            }
            var cleared = tree
            cleared.pendingLink = nil
            return ActionOutcome(tree: cleared, transition: nil, handledBy: FlowCatalog.rootFlowName)
        }
        for member in action.params.members where member.key != "uri" {
            throw .invalidParams(
                path: JSONPointer(["params", member.key]).description,
                message: "unknown param \(JSONValue.string(member.key).abbreviatedJSON()) of link; it takes uri only")
        }
        guard let raw = action.params["uri"] else {
            throw .invalidParams(path: "/params/uri", message: "link needs param \"uri\": the URI to open, such as \"/modal/Hi\" or \"myapp://x/home/1\"")
        }
        guard let uri = raw.stringValue else {
            throw .invalidParams(path: "/params/uri", message: "uri must be a string such as \"/modal/Hi\"; found \(raw.typeName)")
        }
        let match = try resolveLink(uri, catalog: catalog, field: "/params/uri")
        return try follow(match, uri: uri, from: tree, catalog: catalog, context: context, limits: limits).actionOutcome
    }

    // MARK: deferred links

    /// After `outcome` (an applied action on `before`), follows the tree's pending link if it
    /// now holds, with the action's user changes in the context. The action stays the one that
    /// was applied: its `handledBy`, its user changes first.
    ///
    /// A pending link that no longer resolves (the definitions changed) or whose actions are
    /// refused now is dropped, and the action's own outcome stands: the user's action is not
    /// failed for a link they opened earlier.
    static func followPendingLink(
        after outcome: ActionOutcome, before: FlowTree, catalog: FlowCatalog, context: FlowContext, limits: FlowLimits
    ) -> ActionOutcome {
        guard let pending = outcome.tree.pendingLink else { return outcome }
        var context = context
        UserChange.apply(outcome.userChanges, to: &context.user)
        var dropped = outcome
        dropped.tree.pendingLink = nil
        guard let match = try? resolveLink(pending.uri, catalog: catalog) else { return dropped }
        guard match.holds(in: context) else { return outcome }
        guard let rebuilt = try? rebuild(match, firstId: outcome.tree.nextId, catalog: catalog, context: context, limits: limits) else {
            return dropped
        }
        return ActionOutcome(
            tree: rebuilt.tree, transition: linkTransition(from: before, to: rebuilt), handledBy: outcome.handledBy,
            userChanges: outcome.userChanges + rebuilt.userChanges, interactionEvent: outcome.interactionEvent)
    }

    // MARK: rebuilding

    /// A cold-start stack with a link's actions applied.
    struct RebuiltStack {
        var tree: FlowTree
        var handledBy = FlowCatalog.rootFlowName
        var userChanges: [UserChange] = []
        /// The transition of the last action, `nil` with no actions.
        var lastTransition: Transition?
        /// What was on screen before the last action.
        var screensBeforeLast: [ScreenRef]

        init(tree: FlowTree) {
            self.tree = tree
            self.screensBeforeLast = tree.screens
        }
    }

    static func rebuild(
        _ match: LinkMatch, firstId: Int, catalog: FlowCatalog, context: FlowContext, limits: FlowLimits
    ) throws(FlowError) -> RebuiltStack {
        var context = context
        var rebuilt = RebuiltStack(tree: try start(
            catalog: catalog, context: context, rootFlow: FlowCatalog.rootFlowName, limits: limits, firstId: firstId))
        for (step, action) in match.actions.enumerated() {
            let outcome: ActionOutcome
            do throws(FlowError) {
                if action.type == FlowAction.link || action.type == FlowAction.linkCancel || action.isInteractionAction {
                    throw .refused(
                        flow: FlowCatalog.rootFlowName, action: action.type,
                        reason: "a link's actions move through the flows; they cannot follow links or drive interactions")
                }
                outcome = try apply(action, to: rebuilt.tree, catalog: catalog, context: context, limits: limits)
            } catch {
                throw .linkRefused(pattern: match.pattern, step: step, action: action.type, underlying: error)
            }
            rebuilt.screensBeforeLast = rebuilt.tree.screens
            rebuilt.tree = outcome.tree
            rebuilt.handledBy = outcome.handledBy
            rebuilt.lastTransition = outcome.transition
            rebuilt.userChanges += outcome.userChanges
            // As the server does between actions: later steps see the user state earlier ones set.
            UserChange.apply(outcome.userChanges, to: &context.user)
        }
        return rebuilt
    }

    /// One transition from the old top to the linked top; see
    /// ``followLink(_:from:catalog:context:limits:field:)``.
    static func linkTransition(from old: FlowTree, to rebuilt: RebuiltStack) -> Transition? {
        guard let source = old.top, let target = rebuilt.tree.top else { return nil }
        let seen = old.screens
        if let last = rebuilt.lastTransition, showSame(rebuilt.screensBeforeLast, seen) {
            return Transition(type: last.type, from: source, to: target, animated: last.animated, style: last.style)
        }
        let unchanged = showSame(rebuilt.tree.screens, seen)
        return Transition(type: .replaceRoot, from: source, to: target, animated: !unchanged, style: "crossFade")
    }

    /// Whether two lists of screens look the same: flows, features and params, ids aside.
    private static func showSame(_ lhs: [ScreenRef], _ rhs: [ScreenRef]) -> Bool {
        lhs.count == rhs.count
            && zip(lhs, rhs).allSatisfy { $0.flow == $1.flow && $0.feature == $1.feature && $0.params == $1.params }
    }

    // MARK: values

    /// A captured text as its placeholder's type: `integer` (`-?[0-9]+`), `number` (decimal,
    /// optional fraction and exponent), `boolean` (`true` or `false`, any case), `string`.
    static func linkValue(_ text: String, as type: FlowRule.ParamType) -> JSONValue? {
        switch type {
        case .integer:
            guard isDecimal(text, fraction: false), let number = Int(text) else { return nil }
            return .integer(number)
        case .number:
            if isDecimal(text, fraction: false), let number = Int(text) { return .integer(number) }
            guard isDecimal(text, fraction: true), let number = Double(text), number.isFinite else { return nil }
            return .number(number)
        case .boolean:
            switch text.lowercased() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return nil
            }
        default:
            return .string(text)
        }
    }

    /// `[+-]?[0-9]+`, and with `fraction` also `(\.[0-9]+)?([eE][+-]?[0-9]+)?`: no `inf`, `nan`
    /// or hex, which `Double.init` would accept.
    private static func isDecimal(_ text: String, fraction: Bool) -> Bool {
        var bytes = text.utf8[...]
        func digits() -> Bool {
            let count = bytes.prefix(while: LinkURI.isDigit).count
            bytes = bytes.dropFirst(count)
            return count > 0
        }
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        guard digits() else { return false }
        if fraction {
            if bytes.first == UInt8(ascii: ".") {
                bytes = bytes.dropFirst()
                guard digits() else { return false }
            }
            if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
                bytes = bytes.dropFirst()
                if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
                guard digits() else { return false }
            }
        }
        return bytes.isEmpty
    }

    /// Replaces each `{"$link": name}` with the captured value.
    private static func substitute(_ value: JSONValue, with params: JSONObject, pattern: String) throws(FlowError) -> JSONValue {
        switch value {
        case .object(let object):
            if object.count == 1, let name = object["$link"]?.stringValue {
                guard let captured = params[name] else {
                    throw .brokenDefinition(
                        flow: FlowCatalog.rootFlowName,
                        message: "link \(pattern) uses {\"$link\": \(JSONValue.string(name).jsonText)}, which its pattern does not capture")
                }
                return captured
            }
            var members: [JSONObject.Member] = []
            members.reserveCapacity(object.count)
            for member in object.members {
                members.append(JSONObject.Member(key: member.key, value: try substitute(member.value, with: params, pattern: pattern)))
            }
            return .object(JSONObject(uniqueMembers: members))
        case .array(let elements):
            var substituted: [JSONValue] = []
            substituted.reserveCapacity(elements.count)
            for element in elements { substituted.append(try substitute(element, with: params, pattern: pattern)) }
            return .array(substituted)
        default:
            return value
        }
    }
}

extension FlowRule.ParamType {
    /// `a` or `an`, for messages.
    var article: String {
        switch self {
        case .integer, .object, .array, .any: return "an"
        default: return "a"
        }
    }
}
