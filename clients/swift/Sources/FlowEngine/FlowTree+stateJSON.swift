// FlowTree+stateJSON: writes the navigation part of the state document (root, screens, top, transition, …).

import JSON

extension FlowTree {
    /// Writes the navigation keys of the state document into an object the caller has opened:
    /// `root`, `screens`, `top`, `transition`, `interaction`, `pendingLink` and `handledBy`. The server writes
    /// `sessionId`, `userId`, `version`, `flags` and `experiments` around them.
    ///
    /// ```swift
    /// var writer = JSONWriter()
    /// writer.beginObject()
    /// writer.writeKey(literal: "sessionId"); writer.writeString(id)
    /// tree.writeNavigation(into: &writer, transition: outcome.transition, handledBy: outcome.handledBy)
    /// writer.writeKey(literal: "flags"); …
    /// writer.endObject()
    /// ```
    public func writeNavigation(into writer: inout JSONWriter, transition: Transition? = nil, handledBy: String? = nil) {
        writer.writeKey(literal: "root")
        writeRoot(into: &writer)
        writer.writeKey(literal: "screens")
        writeScreens(into: &writer)
        writer.writeKey(literal: "top")
        writeTop(into: &writer)
        writer.writeKey(literal: "transition")
        if let transition { transition.write(into: &writer) } else { writer.writeNull() }
        writer.writeKey(literal: "interaction")
        writeInteraction(into: &writer)
        writer.writeKey(literal: "pendingLink")
        writePendingLink(into: &writer)
        writer.writeKey(literal: "pendingActions")
        writePendingActions(into: &writer)
        writer.writeKey(literal: "handledBy")
        writer.writeOptionalString(handledBy)
    }

    /// The navigation keys as a standalone JSON object, for tests and debugging.
    public func navigationJSON(transition: Transition? = nil, handledBy: String? = nil) -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        writer.beginObject()
        writeNavigation(into: &writer, transition: transition, handledBy: handledBy)
        writer.endObject()
        return writer.takeBytes()
    }

    /// Writes `root`: the nested flow controllers, `{"id","flow","kind","style"?,"selected"?,
    /// "entries","presented"}` with screen entries `{"id","feature","params"}`.
    public func writeRoot(into writer: inout JSONWriter) {
        root.write(into: &writer, isPresented: false)
    }

    /// Writes `top`: the screen on top, `{id, feature, params, flow, flowId}`.
    public func writeTop(into writer: inout JSONWriter) {
        if let top { top.write(into: &writer) } else { writer.writeNull() }
    }

    /// Writes `screens`: bottom to top, each `{id, feature, params, flow, flowId}`.
    public func writeScreens(into writer: inout JSONWriter) {
        writer.beginArray()
        root.writeScreens(into: &writer)
        writer.endArray()
    }

    /// Writes `interaction`: `null`, or `{action, from, progress, handledBy, transition}` where
    /// `transition` previews what finishing would do.
    public func writeInteraction(into writer: inout JSONWriter) {
        guard let interaction else {
            writer.writeNull()
            return
        }
        writer.beginObject()
        writer.writeKey(literal: "action")
        writer.writeString(interaction.action.type)
        writer.writeKey(literal: "from")
        writer.writeOptionalString(interaction.action.from)
        writer.writeKey(literal: "progress")
        writer.writeNumber(interaction.progress)
        writer.writeKey(literal: "handledBy")
        writer.writeString(interaction.handledBy)
        writer.writeKey(literal: "transition")
        if let preview = interaction.preview { preview.write(into: &writer) } else { writer.writeNull() }
        writer.endObject()
    }
}

extension FlowTree {
    /// Writes `pendingLink`: `null`, or `{"uri", "pattern"}` for a link that waits for its
    /// `when` (it is followed after the first action that makes it hold).
    ///
    /// ```swift
    /// writer.writeKey(literal: "pendingLink")
    /// tree.writePendingLink(into: &writer)   // {"uri":"/modal/Hi","pattern":"/modal/{content}"}
    /// ```
    public func writePendingLink(into writer: inout JSONWriter) {
        if let pendingLink { pendingLink.write(into: &writer) } else { writer.writeNull() }
    }

    /// Writes `pendingActions`: the actions waiting for their guards, outermost first, each
    /// `{"action": {"type","from","params"}, "source": "e4", "guard": {"flow","flowId"}}`.
    public func writePendingActions(into writer: inout JSONWriter) {
        writer.beginArray()
        for pending in pendingActions { pending.write(into: &writer) }
        writer.endArray()
    }
}

extension ActionOutcome {
    /// Writes the navigation keys of the state document for this outcome; see
    /// ``FlowTree/writeNavigation(into:transition:handledBy:)``.
    public func writeNavigation(into writer: inout JSONWriter) {
        tree.writeNavigation(into: &writer, transition: transition, handledBy: handledBy)
    }
}

extension FlowNode {
    /// Writes the node as `{"id","flow","kind","style"?,"selected"?,"entries","presented"}`:
    /// `style` on presented nodes, `selected` on tabbed ones.
    func write(into writer: inout JSONWriter, isPresented: Bool) {
        writer.beginObject()
        writer.writeKey(literal: "id")
        writer.writeEntryId(prefix: EntryId.flowPrefix, id)
        writer.writeKey(literal: "flow")
        writer.writeString(flow)
        writer.writeKey(literal: "kind")
        writer.writeString(kind.rawValue)
        if isPresented {
            writer.writeKey(literal: "style")
            writer.writeOptionalString(presentationStyle)
        }
        if kind == .tabbed {
            writer.writeKey(literal: "selected")
            writer.writeInteger(selected)
        }
        writer.writeKey(literal: "entries")
        writer.beginArray()
        for entry in entries {
            switch entry {
            case .screen(let screen):
                writer.beginObject()
                writer.writeKey(literal: "id")
                writer.writeEntryId(prefix: EntryId.screenPrefix, screen.id)
                writer.writeKey(literal: "feature")
                writer.writeString(screen.feature)
                writer.writeKey(literal: "params")
                writer.writeObject(screen.params)
                if let sections = screen.sections {
                    writer.writeKey(literal: "sections")
                    ScreenList.write(sections, into: &writer)
                }
                if screen.isHandoff {
                    writer.writeKey(literal: "handoff")
                    writer.writeString(screen.feature)
                }
                writer.endObject()
            case .flow(let child):
                child.write(into: &writer, isPresented: false)
            }
        }
        writer.endArray()
        writer.writeKey(literal: "presented")
        if let presented { presented.write(into: &writer, isPresented: true) } else { writer.writeNull() }
        writer.endObject()
    }

    fileprivate func writeScreens(into writer: inout JSONWriter) {
        switch kind {
        case .stacked:
            for entry in entries { writeScreens(of: entry, into: &writer) }
        case .tabbed:
            if entries.indices.contains(selected) { writeScreens(of: entries[selected], into: &writer) }
        }
        presented?.writeScreens(into: &writer)
    }

    private func writeScreens(of entry: FlowEntry, into writer: inout JSONWriter) {
        switch entry {
        case .screen(let screen):
            ScreenRef.write(screen: screen, owner: self, into: &writer)
        case .flow(let child):
            child.writeScreens(into: &writer)
        }
    }
}

extension ScreenRef {
    /// Writes `{"id","feature","params","flow","flowId"}`, and `"handoff": kind` for a hand-off.
    public func write(into writer: inout JSONWriter) {
        Self.write(id: id, feature: feature, params: params, flow: flow, flowId: flowId, isHandoff: isHandoff, into: &writer)
    }

    fileprivate static func write(screen: ScreenEntry, owner: FlowNode, into writer: inout JSONWriter) {
        write(
            id: screen.id, feature: screen.feature, params: screen.params, flow: owner.flow, flowId: owner.id,
            isHandoff: screen.isHandoff, into: &writer)
    }

    private static func write(
        id: Int, feature: String, params: JSONObject, flow: String, flowId: Int, isHandoff: Bool, into writer: inout JSONWriter
    ) {
        writer.beginObject()
        writer.writeKey(literal: "id")
        writer.writeEntryId(prefix: EntryId.screenPrefix, id)
        writer.writeKey(literal: "feature")
        writer.writeString(feature)
        writer.writeKey(literal: "params")
        writer.writeObject(params)
        writer.writeKey(literal: "flow")
        writer.writeString(flow)
        writer.writeKey(literal: "flowId")
        writer.writeEntryId(prefix: EntryId.flowPrefix, flowId)
        if isHandoff {
            writer.writeKey(literal: "handoff")
            writer.writeString(feature)
        }
        writer.endObject()
    }
}

extension Transition {
    /// Writes `{"type","from","to","animated","style","interactive"}`, `"result": {"id",
    /// "feature","into"}` when a screen received a result, and `"lists": [{"id", "sections",
    /// "rows"}]` when lists changed (``ListChanges``), by screen id ascending.
    public func write(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "type")
        writer.writeString(type.rawValue)
        writer.writeKey(literal: "from")
        if let from { from.write(into: &writer) } else { writer.writeNull() }
        writer.writeKey(literal: "to")
        if let to { to.write(into: &writer) } else { writer.writeNull() }
        writer.writeKey(literal: "animated")
        writer.writeBool(animated)
        writer.writeKey(literal: "style")
        writer.writeOptionalString(style)
        writer.writeKey(literal: "interactive")
        writer.writeBool(interactive)
        if let result {
            writer.writeKey(literal: "result")
            result.write(into: &writer)
        }
        if !lists.isEmpty {
            writer.writeKey(literal: "lists")
            writer.beginArray()
            for list in lists {
                writer.beginObject()
                writer.writeKey(literal: "id")
                writer.writeEntryId(prefix: EntryId.screenPrefix, list.id)
                writer.writeKey(literal: "sections")
                list.changes.writeStage(sections: true, into: &writer)
                writer.writeKey(literal: "rows")
                list.changes.writeStage(sections: false, into: &writer)
                writer.endObject()
            }
            writer.endArray()
        }
        writer.endObject()
    }
}

extension ResultReceipt {
    /// `{"id": "e5", "feature": "checkout.review", "into": "address"}`.
    public func write(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "id")
        writer.writeEntryId(prefix: EntryId.screenPrefix, id)
        writer.writeKey(literal: "feature")
        writer.writeString(feature)
        writer.writeKey(literal: "into")
        writer.writeString(into)
        writer.endObject()
    }
}
