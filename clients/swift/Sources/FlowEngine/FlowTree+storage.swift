// FlowTree+storage: the lossless storage encoding of a tree (ids, counter, pending interaction and link) and its decoding.

import JSON

extension FlowTree {
    /// The version of the storage format written by ``writeStorage(into:)``.
    public static let storageFormat = 1

    /// Writes the tree in its storage format: everything needed to get the same tree back,
    /// including `nextId`, the pending interaction, the pending link and the actions waiting for
    /// guards. Ids are stored as integers. `pendingLink`, `pendingActions`, a screen's `handoff`
    /// and a transition's `result` are written only when there are some, so trees stored before
    /// they existed read back unchanged.
    ///
    /// ```swift
    /// let bytes = tree.storageBytes()
    /// let again = try FlowTree(storage: bytes)   // again == tree
    /// ```
    public func writeStorage(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "format")
        writer.writeInteger(Self.storageFormat)
        writer.writeKey(literal: "nextId")
        writer.writeInteger(nextId)
        writer.writeKey(literal: "root")
        root.writeStorage(into: &writer)
        if let interaction {
            writer.writeKey(literal: "interaction")
            writer.beginObject()
            writer.writeKey(literal: "action")
            interaction.action.writeStorage(into: &writer)
            writer.writeKey(literal: "progress")
            writer.writeNumber(interaction.progress)
            writer.writeKey(literal: "handledBy")
            writer.writeString(interaction.handledBy)
            if let preview = interaction.preview {
                writer.writeKey(literal: "preview")
                preview.writeStorage(into: &writer)
            }
            writer.endObject()
        }
        if let pendingLink {
            writer.writeKey(literal: "pendingLink")
            pendingLink.write(into: &writer)
        }
        if !pendingActions.isEmpty {
            writer.writeKey(literal: "pendingActions")
            writer.beginArray()
            for pending in pendingActions {
                writer.beginObject()
                writer.writeKey(literal: "action")
                pending.action.writeStorage(into: &writer)
                writer.writeKey(literal: "source")
                writer.writeInteger(pending.source)
                writer.writeKey(literal: "guardFlow")
                writer.writeString(pending.guardFlow)
                writer.writeKey(literal: "guardFlowId")
                writer.writeInteger(pending.guardFlowId)
                writer.endObject()
            }
            writer.endArray()
        }
        writer.endObject()
    }

    /// The storage encoding as bytes.
    public func storageBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writeStorage(into: &writer)
        return writer.takeBytes()
    }

    /// A length `storageBytes()` does not exceed, from the length of this tree's state document
    /// (`SessionState.document`) and a walk of its flows that reads no params; nil when the
    /// tree holds what the document leaves out (a pending interaction, actions waiting for
    /// guards: their actions' params and rows), where only encoding tells. A server checking a
    /// size limit encodes the tree only when this bound is over the limit, or when it stores the
    /// tree anyway.
    ///
    /// Why the document bounds the storage: it writes every flow and screen the storage writes,
    /// with the same params, sections and pending link, and ids as `"f12"` where the storage
    /// has `12`, and its members outside `root` (session and user ids, version, screens,
    /// transition, flags, …) are longer than the storage's `format` and `nextId`. Only two
    /// things are written by the storage alone: a `style` on a flow that is not presented, and
    /// `"handoff":true`, where the document writes the feature's name (shorter when the name is
    /// under three bytes). `StorageBoundTests` checks the bound against the encoding at every
    /// step of its walks.
    public func storageLengthBound(documentLength: Int) -> Int? {
        guard interaction == nil, pendingActions.isEmpty else { return nil }
        return documentLength + root.storageExcess(isPresented: false)
    }

    /// Reads a tree from its storage encoding, checking every field and the tree's invariants
    /// (``structuralProblems(limits:)``).
    public init(storage bytes: some Collection<UInt8>, limits: FlowLimits = .default) throws(FlowStorageError) {
        let value: JSONValue
        do throws(JSONParseError) {
            // Nodes nest two JSON levels per flow, so allow far more depth than requests get.
            value = try JSONParser.parse(bytes, limits: .storedData)
        } catch {
            throw FlowStorageError(path: "", message: "invalid JSON: \(error.description)")
        }
        try self.init(storage: value, limits: limits)
    }

    /// Reads a tree from a parsed storage document.
    public init(storage value: JSONValue, limits: FlowLimits = .default) throws(FlowStorageError) {
        var reader = StorageReader(limits: limits)
        self = try reader.readTree(value)
        if let problem = structuralProblems(limits: limits).first {
            throw FlowStorageError(path: "", message: problem)
        }
    }
}

extension FlowNode {
    fileprivate func writeStorage(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "id")
        writer.writeInteger(id)
        writer.writeKey(literal: "flow")
        writer.writeString(flow)
        writer.writeKey(literal: "kind")
        writer.writeString(kind.rawValue)
        if kind == .tabbed {
            writer.writeKey(literal: "selected")
            writer.writeInteger(selected)
        }
        if let presentationStyle {
            writer.writeKey(literal: "style")
            writer.writeString(presentationStyle)
        }
        writer.writeKey(literal: "entries")
        writer.beginArray()
        for entry in entries {
            switch entry {
            case .screen(let screen):
                writer.beginObject()
                writer.writeKey(literal: "id")
                writer.writeInteger(screen.id)
                writer.writeKey(literal: "feature")
                writer.writeString(screen.feature)
                if !screen.params.isEmpty {
                    writer.writeKey(literal: "params")
                    writer.writeObject(screen.params)
                }
                if screen.isHandoff {
                    writer.writeKey(literal: "handoff")
                    writer.writeBool(true)
                }
                if let sections = screen.sections {
                    writer.writeKey(literal: "sections")
                    ScreenList.write(sections, into: &writer)
                }
                writer.endObject()
            case .flow(let child):
                child.writeStorage(into: &writer)
            }
        }
        writer.endArray()
        if let presented {
            writer.writeKey(literal: "presented")
            presented.writeStorage(into: &writer)
        }
        writer.endObject()
    }
}

extension FlowNode {
    /// What the storage writes for this flow and those under it that the document does not
    /// (see ``FlowTree/storageLengthBound(documentLength:)``): `,"style":` and the style, each
    /// byte escaped to at most six, on a flow that is not presented; two bytes at most per
    /// hand-off screen (`true` against a quoted feature name of at least no bytes).
    fileprivate func storageExcess(isPresented: Bool) -> Int {
        var excess = 0
        if !isPresented, let presentationStyle { excess += 11 + 6 * presentationStyle.utf8.count }
        for entry in entries {
            switch entry {
            case .screen(let screen): if screen.isHandoff { excess += 2 }
            case .flow(let child): excess += child.storageExcess(isPresented: false)
            }
        }
        if let presented { excess += presented.storageExcess(isPresented: true) }
        return excess
    }
}

extension FlowAction {
    fileprivate func writeStorage(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "type")
        writer.writeString(type)
        if let from {
            writer.writeKey(literal: "from")
            writer.writeString(from)
        }
        if let row {
            writer.writeKey(literal: "row")
            writer.writeString(row)
        }
        if !params.isEmpty {
            writer.writeKey(literal: "params")
            writer.writeObject(params)
        }
        writer.writeKey(literal: "interactive")
        writer.writeBool(interactive)
        writer.endObject()
    }
}

extension Transition {
    fileprivate func writeStorage(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "type")
        writer.writeString(type.rawValue)
        if let from {
            writer.writeKey(literal: "from")
            from.writeStorage(into: &writer)
        }
        if let to {
            writer.writeKey(literal: "to")
            to.writeStorage(into: &writer)
        }
        writer.writeKey(literal: "animated")
        writer.writeBool(animated)
        if let style {
            writer.writeKey(literal: "style")
            writer.writeString(style)
        }
        writer.writeKey(literal: "interactive")
        writer.writeBool(interactive)
        if let result {
            writer.writeKey(literal: "result")
            writer.beginObject()
            writer.writeKey(literal: "id")
            writer.writeInteger(result.id)
            writer.writeKey(literal: "feature")
            writer.writeString(result.feature)
            writer.writeKey(literal: "into")
            writer.writeString(result.into)
            writer.endObject()
        }
        writer.endObject()
    }
}

extension ScreenRef {
    fileprivate func writeStorage(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "id")
        writer.writeInteger(id)
        writer.writeKey(literal: "feature")
        writer.writeString(feature)
        if !params.isEmpty {
            writer.writeKey(literal: "params")
            writer.writeObject(params)
        }
        writer.writeKey(literal: "flow")
        writer.writeString(flow)
        writer.writeKey(literal: "flowId")
        writer.writeInteger(flowId)
        if isHandoff {
            writer.writeKey(literal: "handoff")
            writer.writeBool(true)
        }
        writer.endObject()
    }
}
