// The committed state of one session as the server keeps it in memory.
import JSON
import FlowEngine

/// A session as committed: the tree, its version, and what was fixed at creation.
struct LiveSession: Sendable {
    let id: String
    let userId: String
    let tokenHash: [UInt8]
    var version: Int { didSet { document = nil } }
    var tree: FlowTree { didSet { document = nil } }
    /// Attributes, traits, flag values; `user` holds the user's state as this session knows it.
    var context: FlowContext
    /// The flow definitions of the versions this session runs (shared between sessions).
    let catalog: FlowCatalog
    /// Flag evaluation details, already encoded (`{"eu-face-scan":{"value":false,…}}`).
    let flagsJSON: [UInt8]
    /// `{experiment: variant}`, already encoded.
    let experimentsJSON: [UInt8]
    /// Flow versions this session runs, already encoded (`{"app":1,…}`).
    let flowVersionsJSON: [UInt8]
    /// The session was placed in at least one experiment: its screens feed the report's funnel.
    let inExperiment: Bool
    /// The transition that produced `version`, encoded; nil at creation or when nothing moved.
    var lastTransitionJSON: [UInt8]? { didSet { document = nil } }
    var handledBy: String? { didSet { document = nil } }
    /// Set by a delete, so the slot drops the state under the same lock.
    var deleted = false
    /// The state document of this version, once encoded: reads answer with it as it is. Every
    /// property the document shows clears it when set.
    private(set) var document: [UInt8]?

    init(id: String, userId: String, tokenHash: [UInt8], version: Int, tree: FlowTree, context: FlowContext,
         catalog: FlowCatalog, flagsJSON: [UInt8], experimentsJSON: [UInt8], flowVersionsJSON: [UInt8],
         inExperiment: Bool, lastTransitionJSON: [UInt8]?, handledBy: String?) {
        self.id = id
        self.userId = userId
        self.tokenHash = tokenHash
        self.version = version
        self.tree = tree
        self.context = context
        self.catalog = catalog
        self.flagsJSON = flagsJSON
        self.experimentsJSON = experimentsJSON
        self.flowVersionsJSON = flowVersionsJSON
        self.inExperiment = inExperiment
        self.lastTransitionJSON = lastTransitionJSON
        self.handledBy = handledBy
    }

    /// The state document, encoded at most once per version.
    mutating func cachedStateDocument() -> [UInt8] {
        if let document { return document }
        // The writer's buffer has room to spare (2 KiB); what is kept takes only its bytes, as
        // every cached session keeps one (bench/memory.py: 4,405 bytes per session with the
        // spare room kept, against the limit of 4 KiB).
        let encoded = stateDocument()
        let compact = [UInt8](unsafeUninitializedCapacity: encoded.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: encoded)
        }
        document = compact
        return compact
    }

    /// The state document: every session answer's body.
    func stateDocument() -> [UInt8] {
        var writer = JSONWriter(capacity: 2048)
        writer.beginObject()
        writer.writeKey("sessionId")
        writer.writeString(id)
        writer.writeKey("userId")
        writer.writeString(userId)
        writer.writeKey("version")
        writer.writeInteger(version)
        writer.writeKey("root")
        tree.writeRoot(into: &writer)
        writer.writeKey("screens")
        tree.writeScreens(into: &writer)
        writer.writeKey("top")
        tree.writeTop(into: &writer)
        writer.writeKey("transition")
        if let lastTransitionJSON { writer.writeRawValue(lastTransitionJSON) } else { writer.writeNull() }
        writer.writeKey("interaction")
        tree.writeInteraction(into: &writer)
        writer.writeKey("pendingLink")
        tree.writePendingLink(into: &writer)
        writer.writeKey("handledBy")
        writer.writeOptionalString(handledBy)
        writer.writeKey("flags")
        writer.writeRawValue(flagsJSON)
        writer.writeKey("experiments")
        writer.writeRawValue(experimentsJSON)
        writer.endObject()
        return writer.takeBytes()
    }
}
