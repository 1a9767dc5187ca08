// SessionState: one session as the engine alone carries it forward, and its state document.

import JSON

/// A session as the engine sees it: the tree at a version, the context its conditions read, the
/// catalog of the flow versions it runs, and what its state document shows besides the tree.
///
/// The server answers every session request with ``document()``; a client that holds the same
/// value (from a session's bundle, see ``SessionBundle``) computes the same answer for any
/// action with ``applying(_:limits:)``, byte for byte, without a round trip.
///
/// ```swift
/// let bundle = try SessionBundle(json: try JSONParser.parse(bytes))
/// var state = bundle.state
/// let (next, outcome) = try state.applying(FlowAction(type: "onboarding.showSecond", from: "e3"))
/// next.document()        // what POST /v1/sessions/{id}/actions will answer
/// outcome.transition     // how to animate it
/// ```
public struct SessionState: Sendable {
    public let sessionId: String
    public let userId: String
    /// Grows by one with every applied action.
    public var version: Int
    public var tree: FlowTree
    /// Attributes, traits and flag values fixed at creation, and the user's state as known now.
    public var context: FlowContext
    public let catalog: FlowCatalog
    /// The flag evaluation details the document shows (`{"eu-face-scan":{"value":false,…}}`).
    public let flagsJSON: [UInt8]
    /// `{experiment: variant}` as the document shows it.
    public let experimentsJSON: [UInt8]
    /// The transition that produced `version`, encoded; nil at creation or when nothing moved.
    public var transitionJSON: [UInt8]?
    /// The flow that handled the action that produced `version`.
    public var handledBy: String?

    public init(sessionId: String, userId: String, version: Int, tree: FlowTree, context: FlowContext,
                catalog: FlowCatalog, flagsJSON: [UInt8], experimentsJSON: [UInt8],
                transitionJSON: [UInt8]? = nil, handledBy: String? = nil) {
        self.sessionId = sessionId
        self.userId = userId
        self.version = version
        self.tree = tree
        self.context = context
        self.catalog = catalog
        self.flagsJSON = flagsJSON
        self.experimentsJSON = experimentsJSON
        self.transitionJSON = transitionJSON
        self.handledBy = handledBy
    }

    /// The state after `action`, as the server commits it: the next version, the new tree, its
    /// transition and handler, and the user's state with the action's changes. The state itself
    /// is unchanged; a refused action throws as ``FlowEngine/apply(_:to:catalog:context:limits:)``.
    public func applying(_ action: FlowAction, limits: FlowLimits = .default) throws(FlowError) -> (next: SessionState, outcome: ActionOutcome) {
        let outcome = try FlowEngine.apply(action, to: tree, catalog: catalog, context: context, limits: limits)
        var next = self
        next.advance(by: outcome)
        return (next, outcome)
    }

    /// Moves to the version `outcome` produced.
    public mutating func advance(by outcome: ActionOutcome) {
        version += 1
        tree = outcome.tree
        handledBy = outcome.handledBy
        transitionJSON = outcome.transition.map(Self.encode)
        UserChange.apply(outcome.userChanges, to: &context.user)
    }

    /// The state document: the body of every session answer.
    public func document() -> [UInt8] {
        Self.document(sessionId: sessionId, userId: userId, version: version, tree: tree, transitionJSON: transitionJSON,
                      handledBy: handledBy, flagsJSON: flagsJSON, experimentsJSON: experimentsJSON)
    }

    /// The state document from its parts: `{sessionId, userId, version, root, screens, top,
    /// transition, interaction, pendingLink, pendingActions, handledBy, flags, experiments}`.
    public static func document(sessionId: String, userId: String, version: Int, tree: FlowTree, transitionJSON: [UInt8]?,
                                handledBy: String?, flagsJSON: [UInt8], experimentsJSON: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(capacity: 2048)
        writer.beginObject()
        writer.writeKey(literal: "sessionId")
        writer.writeString(sessionId)
        writer.writeKey(literal: "userId")
        writer.writeString(userId)
        writer.writeKey(literal: "version")
        writer.writeInteger(version)
        writer.writeKey(literal: "root")
        tree.writeRoot(into: &writer)
        writer.writeKey(literal: "screens")
        tree.writeScreens(into: &writer)
        writer.writeKey(literal: "top")
        tree.writeTop(into: &writer)
        writer.writeKey(literal: "transition")
        if let transitionJSON { writer.writeRawValue(transitionJSON) } else { writer.writeNull() }
        writer.writeKey(literal: "interaction")
        tree.writeInteraction(into: &writer)
        writer.writeKey(literal: "pendingLink")
        tree.writePendingLink(into: &writer)
        writer.writeKey(literal: "pendingActions")
        tree.writePendingActions(into: &writer)
        writer.writeKey(literal: "handledBy")
        writer.writeOptionalString(handledBy)
        writer.writeKey(literal: "flags")
        writer.writeRawValue(flagsJSON)
        writer.writeKey(literal: "experiments")
        writer.writeRawValue(experimentsJSON)
        writer.endObject()
        return writer.takeBytes()
    }

    /// A transition as the document and the action log show it.
    public static func encode(_ transition: Transition) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        transition.write(into: &writer)
        return writer.takeBytes()
    }
}
