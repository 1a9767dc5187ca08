// FlowBuilder: builds flow controllers from their definitions, drawing ids from the session's counter.

import JSON

/// Builds flow controllers from definitions: initial entries filtered by their `when`, child
/// flows built recursively, ids taken from the session's counter.
///
/// A flow built with params hands them to its initial entries: each initial screen gets the
/// flow's params overlaid by its own, and each initial child flow receives them in turn. That is
/// how `present {"flow": "modal", "params": {"content": …}}` puts `content` on the `modal` screen.
struct FlowBuilder {
    let catalog: FlowCatalog
    let context: FlowContext
    let limits: FlowLimits
    private(set) var nextId: Int
    /// Entries created by this builder, checked against the limit as they are made so that a
    /// definition fanning out (tabs of tabs of tabs) fails early instead of exhausting memory.
    private var created = 0

    init(catalog: FlowCatalog, context: FlowContext, limits: FlowLimits, nextId: Int) {
        self.catalog = catalog
        self.context = context
        self.limits = limits
        self.nextId = nextId
    }

    mutating func allocateId() -> Int {
        let id = nextId
        nextId += 1
        created += 1
        return id
    }

    mutating func makeScreen(feature: String, params: JSONObject, isHandoff: Bool = false, sections: [ListSection]? = nil) -> ScreenEntry {
        ScreenEntry(id: allocateId(), feature: feature, params: params, isHandoff: isHandoff, sections: sections)
    }

    /// Builds the flow `name`; `ancestors` are the flows being built around it, to catch a flow
    /// that contains itself.
    mutating func makeNode(flow name: String, params: JSONObject, ancestors: [String] = []) throws(FlowError) -> FlowNode {
        guard let definition = catalog[name] else {
            throw .brokenDefinition(flow: name, message: "no definition named \(JSONValue.string(name).jsonText) is live")
        }
        if ancestors.contains(name) {
            throw .brokenDefinition(
                flow: name, message: "it contains itself through initial: \((ancestors + [name]).joined(separator: " → "))")
        }
        guard ancestors.count < limits.maxDepth else {
            throw .brokenDefinition(flow: name, message: "flows nest deeper than \(limits.maxDepth) levels through initial")
        }
        let id = allocateId()
        var entries: [FlowEntry] = []
        entries.reserveCapacity(definition.initial.count)
        for entry in definition.initial {
            if let when = entry.when, !when.evaluate(in: context, params: params) { continue }
            switch entry.target {
            case .screen(let feature, let own, let rawSections):
                // Initial lists are static, checked when the definition was read.
                var sections: [ListSection]?
                if let rawSections {
                    do throws(ListProblem) {
                        sections = try ScreenList.readSections(rawSections)
                    } catch {
                        throw .brokenDefinition(flow: name, message: "the list of \(feature) is invalid at \(error.pointer): \(error.message)")
                    }
                }
                entries.append(.screen(makeScreen(feature: feature, params: Self.merge(params, own), sections: sections)))
            case .handoff(let kind, let own):
                entries.append(.screen(makeScreen(feature: kind, params: Self.merge(params, own), isHandoff: true)))
            case .flow(let child, let own):
                entries.append(.flow(try makeNode(flow: child, params: Self.merge(params, own), ancestors: ancestors + [name])))
            }
            guard created <= limits.maxEntries else {
                throw .brokenDefinition(flow: name, message: "building it takes more than \(limits.maxEntries) entries")
            }
        }
        guard !entries.isEmpty else {
            throw .brokenDefinition(
                flow: name, message: "the when conditions of its initial entries left none; a flow needs at least one entry")
        }
        let selected = definition.kind == .tabbed && entries.indices.contains(definition.selected) ? definition.selected : 0
        return FlowNode(id: id, flow: name, kind: definition.kind, entries: entries, selected: selected)
    }

    /// `base` overlaid by `own` (own values win).
    static func merge(_ base: JSONObject, _ own: JSONObject) -> JSONObject {
        if base.isEmpty { return own }
        if own.isEmpty { return base }
        var merged = base
        for member in own.members { merged[member.key] = member.value }
        return merged
    }
}
