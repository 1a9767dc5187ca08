// EncodingCache: each version's state document and transition, copied from the last version's bytes where a part did not change.

import JSON

/// Encodes a session's state documents one version after another, copying the bytes of every
/// part that encodes exactly as it did in the last version (a flow and everything inside it, a
/// screen of `screens`, `top`, a transition's ends, the session's fixed keys) and encoding only
/// what changed. The output is byte for byte what ``SessionState/document(sessionId:userId:version:tree:transitionJSON:handledBy:flagsJSON:experimentsJSON:)``
/// and ``SessionState/encode(_:)`` write.
///
/// The stored tree is not made this way: measured over the sample app's walks
/// (`bench/encode.sh`), copying its flows cost more than writing them, because nearly every
/// action changes the root and the flow it acts on, and those are most of its bytes.
///
/// A part is reused only when the value it was written from *encodes like* the value now, never
/// on an id alone (a flow keeps its id while its entries, its tab or a screen's params change):
/// a flow when its fields are the same bytes and its entries and presentation the same arrays
/// (an unchanged subtree shares its storage with the last version's tree, as value semantics
/// copy only what an action touched; a rebuilt one is written again), a screen when its fields,
/// its owner and its params (member by member, in order, strings byte for byte) are.
///
/// It keeps the last output only, so it grows with the tree and no further, and it lives and
/// dies with the session value that holds it. A copy is independent (a value, like the tree).
///
/// ```swift
/// var cache = EncodingCache(sessionId: id, userId: "u-1", flagsJSON: flags, experimentsJSON: experiments)
/// let first = cache.document(version: 1, tree: tree, transitionJSON: nil, handledBy: nil)
/// let (document, transition) = cache.document(
///     version: 2, tree: outcome.tree, transition: outcome.transition, handledBy: outcome.handledBy)
/// ```
public struct EncodingCache: Sendable {
    /// The session's id and user, written at the start of every document.
    let sessionId: String
    let userId: String
    /// The document's `flags` and `experiments`, encoded once at the session's creation (the
    /// caller's arrays, whose storage is shared, not copied).
    let flagsJSON: [UInt8]
    let experimentsJSON: [UInt8]
    /// How many bytes open every document: `{"sessionId":"…","userId":"…","version":`,
    /// copied from the last document; 0 until there is one.
    var headCount = 0
    /// The last state document and where its parts are.
    var lastDocument = EncodedParts()

    public init(sessionId: String, userId: String, flagsJSON: [UInt8], experimentsJSON: [UInt8]) {
        self.sessionId = sessionId
        self.userId = userId
        self.flagsJSON = flagsJSON
        self.experimentsJSON = experimentsJSON
    }

    /// The state document of a version whose transition is already encoded (a session read
    /// back from storage, a version encoded before), and remembers its parts.
    public mutating func document(version: Int, tree: FlowTree, transitionJSON: [UInt8]?, handledBy: String?) -> [UInt8] {
        encodeDocument(version: version, tree: tree, handledBy: handledBy, keepsTransition: false) { _, writer in
            if let transitionJSON { writer.writeRawValue(transitionJSON) } else { writer.writeNull() }
        }.document
    }

    /// The state document of the version `transition` led to, and the transition as the
    /// document shows it (``SessionState/encode(_:)``, for the action log); its ends are copied
    /// from `screens` and from the last document when they did not change.
    public mutating func document(
        version: Int, tree: FlowTree, transition: Transition?, handledBy: String?
    ) -> (document: [UInt8], transition: [UInt8]?) {
        guard let transition else {
            return (document(version: version, tree: tree, transitionJSON: nil, handledBy: handledBy), nil)
        }
        return encodeDocument(version: version, tree: tree, handledBy: handledBy, keepsTransition: true) { parts, writer in
            transition.write(into: &writer) { screen, writer in
                parts.writeScreen(screen, into: &writer)
            }
        }
    }

    /// Forgets the last document, keeping the session's fixed keys (to measure encoding from
    /// nothing; a tree that did not come from the last one needs no such call).
    public mutating func forget() {
        headCount = 0
        lastDocument = EncodedParts()
    }

    private mutating func encodeDocument(
        version: Int, tree: FlowTree, handledBy: String?, keepsTransition: Bool,
        writeTransition: (inout PartWriter, inout JSONWriter) -> Void
    ) -> (document: [UInt8], transition: [UInt8]?) {
        var parts = PartWriter(last: lastDocument)
        var writer = JSONWriter(capacity: max(lastDocument.bytes.count + 256, 1024))
        if headCount > 0 {
            writer.appendRaw(lastDocument.bytes[0..<headCount])
        } else {
            writer.beginObject()
            writer.writeKey(literal: "sessionId")
            writer.writeString(sessionId)
            writer.writeKey(literal: "userId")
            writer.writeString(userId)
            writer.writeKey(literal: "version")
        }
        let head = writer.count
        writer.writeInteger(version)
        writer.writeKey(literal: "root")
        let lastRoot = parts.lastRoot(for: tree.root)
        parts.writeNode(tree.root, isPresented: false, old: lastRoot, into: &writer)
        writer.writeKey(literal: "screens")
        writer.beginArray()
        parts.writeScreens(of: tree.root, old: lastRoot, into: &writer)
        writer.endArray()
        writer.writeKey(literal: "top")
        if let top = tree.top {
            parts.writeScreen(top, into: &writer)
        } else {
            writer.writeNull()
        }
        writer.writeKey(literal: "transition")
        let transitionStart = writer.count  // a key leaves no comma before its value
        writeTransition(&parts, &writer)
        let transitionBytes = keepsTransition ? writer.bytes(in: transitionStart..<writer.count) : nil
        SessionState.writeDocumentEnd(tree: tree, handledBy: handledBy, flagsJSON: flagsJSON, experimentsJSON: experimentsJSON,
                                      into: &writer)
        lastDocument = parts.finish(writer.takeBytes(), root: tree.root)
        headCount = head
        return (lastDocument.bytes, transitionBytes)
    }
}

/// One encoding's bytes, the root flow it was written from, and where its reusable parts lie:
/// ranges by id, not copies of the values (the values are found in `root`, whose storage the
/// session's tree shares), so a cached session keeps a few bytes per flow and screen.
struct EncodedParts: Sendable {
    /// Where the part written from the flow or screen numbered `id` lies in `bytes`.
    struct Part: Sendable {
        var id: Int
        /// A flow in the document with its presentation `style` (it is presented).
        var isPresented: Bool
        var start: UInt32
        var end: UInt32

        init(id: Int, isPresented: Bool = false, range: Range<Int>) {
            self.id = id
            self.isPresented = isPresented
            start = UInt32(truncatingIfNeeded: range.lowerBound)
            end = UInt32(truncatingIfNeeded: range.upperBound)
        }

        var range: Range<Int> { Int(start)..<Int(end) }
    }

    var bytes: [UInt8] = []
    /// The root flow of the tree the output was written from.
    var root: FlowNode?
    /// Flows written whole in the document's `root`.
    var flows: [Part] = []
    /// Screens as `screens` shows them (with their owning flow).
    var screens: [Part] = []
}
