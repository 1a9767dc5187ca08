// FlowTree+wellFormed: the invariants every tree keeps, checked on decoding and by the tests.

extension FlowTree {
    /// What breaks the tree's invariants; empty for every tree the engine produces.
    ///
    /// The invariants: ids are unique, at least 1 and below `nextId`; every flow has at least one
    /// entry and a tabbed flow's selection is one of its tabs (a stacked flow's is 0); a flow has
    /// a presentation style exactly when it is presented; only flows on the visible path present;
    /// names and features are non-empty; the tree stays within `limits`; a pending interaction's
    /// progress is in 0...1; a pending link has its uri and pattern.
    public func structuralProblems(limits: FlowLimits = .default) -> [String] {
        var check = StructureCheck(nextId: nextId)
        if nextId < 1 || nextId > FlowEngine.maxId {
            check.problems.append("nextId \(nextId) is outside 1...\(FlowEngine.maxId)")
        }
        check.visit(root, at: "root", isPresented: false, isVisible: true, depth: 1)
        let size = root.measure()
        if size.entries > limits.maxEntries {
            check.problems.append("the tree holds \(size.entries) entries; the limit is \(limits.maxEntries)")
        }
        if size.depth > limits.maxDepth {
            check.problems.append("flows nest \(size.depth) levels deep; the limit is \(limits.maxDepth)")
        }
        if let interaction {
            if !(interaction.progress >= 0 && interaction.progress <= 1) {
                check.problems.append("the interaction's progress \(interaction.progress) is outside 0...1")
            }
            if interaction.action.type.isEmpty || interaction.handledBy.isEmpty {
                check.problems.append("the interaction lacks its action type or handling flow")
            }
        }
        if let pendingLink, pendingLink.uri.isEmpty || pendingLink.pattern.isEmpty {
            check.problems.append("the pending link lacks its uri or pattern")
        }
        if pendingActions.count > FlowEngine.maxPendingActions {
            check.problems.append("\(pendingActions.count) actions wait for guards; the limit is \(FlowEngine.maxPendingActions)")
        }
        for (index, pending) in pendingActions.enumerated() {
            if pending.action.type.isEmpty || pending.guardFlow.isEmpty {
                check.problems.append("pending action \(index) lacks its type or its guard's flow")
            }
            if pending.source < 1 || pending.source >= nextId || pending.guardFlowId < 1 || pending.guardFlowId >= nextId {
                check.problems.append("pending action \(index) names an id outside 1..<\(nextId)")
            }
        }
        return check.problems
    }
}

/// Walks a tree collecting invariant violations.
private struct StructureCheck {
    let nextId: Int
    var seen: Set<Int> = []
    var problems: [String] = []

    init(nextId: Int) {
        self.nextId = nextId
    }

    mutating func checkId(_ id: Int, at path: String) {
        if id < 1 || id >= nextId {
            problems.append("\(path): id \(id) is outside 1..<\(nextId)")
        }
        if !seen.insert(id).inserted {
            problems.append("\(path): id \(id) is used twice")
        }
    }

    mutating func visit(_ node: FlowNode, at path: String, isPresented: Bool, isVisible: Bool, depth: Int) {
        // Deeper than any allowed tree: stop rather than recurse without bound.
        guard depth <= 4096 else {
            problems.append("\(path): nesting is too deep")
            return
        }
        checkId(node.id, at: path)
        if node.flow.isEmpty { problems.append("\(path): the flow name is empty") }
        if node.entries.isEmpty { problems.append("\(path): flow \(node.flow) has no entries") }
        switch node.kind {
        case .stacked where node.selected != 0:
            problems.append("\(path): stacked flow \(node.flow) has selected \(node.selected); it must be 0")
        case .tabbed where !node.entries.indices.contains(node.selected):
            problems.append("\(path): tabbed flow \(node.flow) selects tab \(node.selected) of \(node.entries.count)")
        default:
            break
        }
        if isPresented && node.presentationStyle == nil {
            problems.append("\(path): presented flow \(node.flow) has no presentation style")
        }
        if !isPresented && node.presentationStyle != nil {
            problems.append("\(path): flow \(node.flow) has a presentation style but is not presented")
        }
        if node.presentedStorage.count > 1 {
            problems.append("\(path): flow \(node.flow) presents more than one flow")
        }
        if let presented = node.presented {
            if !isVisible { problems.append("\(path): flow \(node.flow) presents \(presented.flow) while off screen") }
            visit(presented, at: path + "/presented", isPresented: true, isVisible: isVisible, depth: depth + 1)
        }
        let active = node.activeIndex
        for (index, entry) in node.entries.enumerated() {
            let entryPath = "\(path)/entries/\(index)"
            switch entry {
            case .screen(let screen):
                checkId(screen.id, at: entryPath)
                if screen.feature.isEmpty { problems.append("\(entryPath): the feature is empty") }
            case .flow(let child):
                visit(child, at: entryPath, isPresented: false, isVisible: isVisible && index == active, depth: depth + 1)
            }
        }
    }
}
