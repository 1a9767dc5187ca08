// EffectRun: applies a handled action's effects to a copy of the tree, recording the transition.

import JSON

/// Applies the effects of one handled action, in order, to a working copy of the tree. If any
/// effect cannot apply the whole run is dropped, so an action changes all or nothing.
struct EffectRun {
    private(set) var tree: FlowTree
    private let handlerPath: [TreeStep]
    private let handlerFlow: String
    private let action: FlowAction
    private var builder: FlowBuilder
    private(set) var userChanges: [UserChange] = []
    /// Set once the handling flow itself was dismissed; later effects have nothing to act on.
    private var handlerGone = false
    private var lastNavigation: (kind: Transition.Kind, animated: Bool, style: String?)?
    /// The `result` effect, delivered once every other effect has applied.
    private var result: FlowEffect.ScreenResult?
    private var receipt: ResultReceipt?
    /// The ids of the flows that `push`, `setRoot` or `present` put into the tree, in order (a
    /// guard's effects show its flow this way).
    private(set) var shownFlows: [(id: Int, name: String)] = []
    /// The id of the screen the action came from: the list effects' default screen.
    private let source: Int?

    init(tree: FlowTree, handlerPath: [TreeStep], handlerFlow: String, action: FlowAction,
         catalog: FlowCatalog, context: FlowContext, limits: FlowLimits, source: Int? = nil) {
        self.tree = tree
        self.source = source
        self.handlerPath = handlerPath
        self.handlerFlow = handlerFlow
        self.action = action
        self.builder = FlowBuilder(catalog: catalog, context: context, limits: limits, nextId: tree.nextId)
    }

    /// The transition of the run: the last navigation effect, from the top before to the top now.
    func transition(from before: ScreenRef, interactive: Bool) -> Transition? {
        guard let lastNavigation else { return nil }
        return Transition(
            type: lastNavigation.kind, from: before, to: tree.top, animated: lastNavigation.animated,
            style: lastNavigation.style, interactive: interactive, result: receipt)
    }

    mutating func apply(_ effects: [FlowEffect]) throws(FlowError) {
        for effect in effects { try apply(effect) }
        tree.nextId = builder.nextId
        tree.root.dismissHiddenPresentations(isVisible: true)
        if let result { try deliver(result) }
        let size = tree.root.measure()
        let limits = builder.limits
        if size.entries > limits.maxEntries {
            throw refusal("the session would hold \(size.entries) entries; the limit is \(limits.maxEntries)")
        }
        if size.depth > limits.maxDepth {
            throw refusal("flows would nest \(size.depth) levels deep; the limit is \(limits.maxDepth)")
        }
    }

    private func refusal(_ reason: String) -> FlowError {
        .refused(flow: handlerFlow, action: action.type, reason: reason)
    }

    private mutating func record(_ kind: Transition.Kind, animated: Bool = true, style: String? = nil) {
        lastNavigation = (kind, animated, style)
    }

    private mutating func apply(_ effect: FlowEffect) throws(FlowError) {
        switch effect {
        case .setUser(let values):
            for member in values.members {
                let value = try resolve(member.value, effect: effect.name)
                // A user's state is kept by every store, and PostgreSQL's jsonb cannot hold
                // U+0000: a value with it (a param's, nearly always) is the action's fault, here
                // and on the server alike, not a failed commit.
                if member.key.utf8.contains(0) || Self.holdsNul(value) {
                    let message = "user state cannot hold the character U+0000"
                    let param = Self.firstReference(in: member.value) { action.params[$0].map(Self.holdsNul) == true }
                    guard let param else { throw refusal("\(effect.name): \(message)") }
                    throw invalid(member.value, effect: effect.name, message, param: param)
                }
                userChanges.append(UserChange(key: member.key, value: value))
            }
        case .bubble:
            throw refusal("bubble must be the only effect of its rule")
        case .dismissAll:
            if let style = tree.root.dismissAllPresentations() {
                record(.dismiss, style: style)
            }
        case .dismiss:
            try dismiss()
        case .result(let result):
            guard self.result == nil else { throw refusal("a rule returns at most one result") }
            self.result = result
        case .list(let effect):
            try applyList(effect)
        default:
            guard !handlerGone else {
                throw refusal("\(effect.name) cannot apply: an earlier effect dismissed \(handlerFlow)")
            }
            let path = handlerPath[...]
            guard var handler = tree.root.take(at: path) else {
                throw .corruptTree(message: "the handling flow \(handlerFlow) is not where the route found it")
            }
            defer { tree.root.put(handler, at: path) }
            try apply(effect, to: &handler)
        }
    }

    /// Effects that change only the handling flow, taken out of the tree as `handler`.
    private mutating func apply(_ effect: FlowEffect, to handler: inout FlowNode) throws(FlowError) {
        switch effect {
        case .push(let target):
            try requireStack(handler, for: effect)
            handler.entries.append(try makeEntry(target, effect: effect.name))
            record(.push)
        case .pop:
            try requireStack(handler, for: effect)
            guard handler.entries.count > 1 else {
                throw refusal("cannot pop: the stack of \(handler.flow) has a single entry")
            }
            handler.entries.removeLast()
            record(.pop)
        case .popTo(let target):
            try requireStack(handler, for: effect)
            let index = try popToIndex(target, in: handler)
            handler.entries.removeSubrange((index + 1)...)
            record(.popTo)
        case .popToRoot:
            try requireStack(handler, for: effect)
            guard handler.entries.count > 1 else {
                throw refusal("cannot pop to the root: the stack of \(handler.flow) has a single entry")
            }
            handler.entries.removeSubrange(1...)
            record(.popTo)
        case .setRoot(let target):
            try requireStack(handler, for: effect)
            handler.entries = [try makeEntry(target, effect: effect.name)]
            record(.setRoot)
        case .replaceRoot(let target):
            try requireStack(handler, for: effect)
            let entry = try makeEntry(target, effect: effect.name)
            handler.entries = [entry]
            handler.presentedStorage.removeAll()
            record(.replaceRoot, style: "crossFade")
        case .present(let presentation):
            if let presented = handler.presented {
                throw refusal("\(handler.flow) already presents \(presented.flow) (\(presented.flowId)); dismiss it first")
            }
            let params = try resolve(presentation.params, effect: effect.name)
            var node = try builder.makeNode(flow: presentation.flow, params: params)
            let style = presentation.style.resolved(traits: builder.context.traits)
            node.presentationStyle = style
            shownFlows.append((node.id, node.flow))
            handler.presentedStorage = [node]
            record(.present, style: style)
        case .selectTab(let choice):
            guard handler.kind == .tabbed else {
                throw refusal("selectTab needs a tabbed flow, but \(handler.flow) is stacked")
            }
            handler.selected = try tabIndex(choice, in: handler)
            record(.selectTab, animated: false)
        case .setUser, .bubble, .dismiss, .dismissAll, .result, .list:
            break  // handled at tree level
        }
    }

    private func requireStack(_ handler: FlowNode, for effect: FlowEffect) throws(FlowError) {
        guard handler.kind == .stacked else {
            throw refusal("\(effect.name) needs a stacked flow, but \(handler.flow) is tabbed")
        }
    }

    /// UIKit's `dismiss`: what the handler presents, else the presented flow containing it.
    private mutating func dismiss() throws(FlowError) {
        guard !handlerGone else {
            throw refusal("dismiss cannot apply: an earlier effect dismissed \(handlerFlow)")
        }
        guard let handler = tree.root.node(at: handlerPath[...]) else {
            throw .corruptTree(message: "the handling flow \(handlerFlow) is not where the route found it")
        }
        var presenterPath: ArraySlice<TreeStep>
        if handler.presented != nil {
            presenterPath = handlerPath[...]
        } else {
            var depth = handlerPath.count
            while depth > 0 && handlerPath[depth - 1] != .presented { depth -= 1 }
            guard depth > 0 else {
                throw refusal("\(handlerFlow) presents nothing and is not presented; there is nothing to dismiss")
            }
            presenterPath = handlerPath[0..<(depth - 1)]
            handlerGone = true
        }
        guard var presenter = tree.root.take(at: presenterPath) else {
            throw .corruptTree(message: "the presenting flow of \(handlerFlow) is missing")
        }
        let style = presenter.presented?.presentationStyle
        presenter.presentedStorage.removeAll()
        tree.root.put(presenter, at: presenterPath)
        record(.dismiss, style: style)
    }

    private mutating func makeEntry(_ target: EntryTarget, effect: String) throws(FlowError) -> FlowEntry {
        switch target {
        case .screen(let feature, let params, let rawSections):
            let sections = try rawSections.map { raw throws(FlowError) in try resolveSections(raw, effect: effect) }
            return .screen(builder.makeScreen(feature: feature, params: try resolve(params, effect: effect), sections: sections))
        case .flow(let name, let params):
            let node = try builder.makeNode(flow: name, params: try resolve(params, effect: effect))
            shownFlows.append((node.id, node.flow))
            return .flow(node)
        case .handoff(let kind, let params):
            return .screen(builder.makeScreen(feature: kind, params: try resolve(params, effect: effect), isHandoff: true))
        }
    }

    /// Writes a `result` into the receiving screen's params: the topmost screen showing `to`, or
    /// the screen on top once the other effects have applied.
    private mutating func deliver(_ result: FlowEffect.ScreenResult) throws(FlowError) {
        guard lastNavigation != nil else {
            throw refusal("result returns a value to the screen a pop or a dismiss brings back, but this rule moved nothing")
        }
        let value = try resolve(result.value, effect: "result")
        let place: (path: [TreeStep], index: Int)
        if let feature = result.to {
            guard let found = tree.topmostScreen(showing: feature) else {
                throw refusal("result goes to \(feature), but no screen of \(feature) is in the stack any more")
            }
            place = found
        } else {
            guard let visible = tree.visiblePath(), let index = visible.nodes.last.map(\.activeIndex) else {
                throw .corruptTree(message: "no screen is on top")
            }
            place = (visible.steps, index)
        }
        let path = place.path[...]
        guard var owner = tree.root.take(at: path) else {
            throw .corruptTree(message: "the screen receiving a result is not where it was found")
        }
        defer { tree.root.put(owner, at: path) }
        guard owner.entries.indices.contains(place.index), case .screen(var screen) = owner.entries[place.index] else {
            throw .corruptTree(message: "the screen receiving a result is not where it was found")
        }
        owner.entries[place.index] = .screen(.placeholder)
        screen.params[result.into] = value
        owner.entries[place.index] = .screen(screen)
        receipt = ResultReceipt(id: screen.id, feature: screen.feature, into: result.into)
    }

    private func popToIndex(_ target: FlowEffect.PopTarget, in handler: FlowNode) throws(FlowError) -> Int {
        let below = handler.entries.indices.dropLast()
        switch target {
        case .feature(let feature):
            let shows = { (entry: FlowEntry) -> Bool in
                if case .screen(let screen) = entry { return screen.feature == feature }
                return false
            }
            if let index = below.last(where: { shows(handler.entries[$0]) }) { return index }
            if let top = handler.entries.last, shows(top) {
                throw refusal("\(feature) is already on top of \(handler.flow)")
            }
            throw refusal("no screen of \(feature) is below the top of \(handler.flow)")
        case .id(let text):
            return try index(ofEntry: text, in: handler)
        case .idParam(let name):
            var path: String { JSONPointer(["params", name]).description }  // built only for an error
            guard let value = action.params[name] else {
                throw .invalidParams(path: path, message: "\(action.type) needs param \(JSONValue.string(name).jsonText): the id of the entry to pop to, such as \"e3\"")
            }
            guard let text = value.stringValue, EntryId.parse(text) != nil else {
                throw .invalidParams(path: path, message: "param \(JSONValue.string(name).jsonText) must be an entry id such as \"e3\"; found \(value.abbreviatedJSON(limit: 40))")
            }
            return try index(ofEntry: text, in: handler)
        }
    }

    private func index(ofEntry text: String, in handler: FlowNode) throws(FlowError) -> Int {
        guard let id = EntryId.parse(text) else {
            throw refusal("\(text) is not an entry id")
        }
        let matches = { (entry: FlowEntry) -> Bool in
            switch entry {
            case .screen(let screen): return !id.isFlow && screen.id == id.number
            case .flow(let node): return id.isFlow && node.id == id.number
            }
        }
        if let index = handler.entries.indices.dropLast().last(where: { matches(handler.entries[$0]) }) { return index }
        if let top = handler.entries.last, matches(top) {
            throw refusal("\(text) is already on top of \(handler.flow)")
        }
        throw refusal("no entry \(text) is below the top of \(handler.flow)")
    }

    private func tabIndex(_ choice: FlowEffect.TabChoice, in handler: FlowNode) throws(FlowError) -> Int {
        var range: String { "\(handler.flow) has tabs 0...\(max(handler.entries.count - 1, 0))" }  // only for an error
        switch choice {
        case .index(let index):
            guard handler.entries.indices.contains(index) else {
                throw refusal("tab \(index) is out of range; \(range)")
            }
            return index
        case .param(let name):
            var path: String { JSONPointer(["params", name]).description }  // built only for an error
            guard let value = action.params[name] else {
                throw .invalidParams(path: path, message: "\(action.type) needs param \(JSONValue.string(name).jsonText): the tab index")
            }
            guard let index = value.integerValue else {
                throw .invalidParams(path: path, message: "param \(JSONValue.string(name).jsonText) must be an integer tab index; found \(value.abbreviatedJSON(limit: 40))")
            }
            guard handler.entries.indices.contains(index) else {
                throw .invalidParams(path: path, message: "tab \(index) is out of range; \(range)")
            }
            return index
        }
    }

    // MARK: lists

    /// Applies a list effect to the screen it names (the source screen by default), once its
    /// values are filled in from the params.
    private mutating func applyList(_ effect: ListEffect) throws(FlowError) {
        let operation = try resolveList(effect.operation, effect: effect.name)
        let place: (path: [TreeStep], index: Int)
        if let feature = effect.screen {
            guard let found = tree.topmostScreen(showing: feature) else {
                throw refusal("\(effect.name) changes the list of \(feature), but no screen of \(feature) is in the stack")
            }
            place = found
        } else {
            guard let source, let found = tree.place(ofScreen: source) else {
                throw refusal("\(effect.name) changes the list of the screen the action came from, which an earlier effect took away; name the screen with \"screen\"")
            }
            place = found
        }
        let path = place.path[...]
        guard var owner = tree.root.take(at: path) else {
            throw .corruptTree(message: "the screen of a list effect is not where it was found")
        }
        defer { tree.root.put(owner, at: path) }
        guard owner.entries.indices.contains(place.index), case .screen(var screen) = owner.entries[place.index] else {
            throw .corruptTree(message: "the screen of a list effect is not where it was found")
        }
        guard var sections = screen.sections else {
            throw refusal("\(effect.name) changes a list, but screen \(screen.entryId) (\(screen.feature)) has none; give its entry \"sections\"")
        }
        owner.entries[place.index] = .screen(.placeholder)
        screen.sections = nil  // so `sections` is the only reference and changes in place
        let reason = operation.apply(to: &sections)
        let tooLarge = reason == nil ? ScreenList.sizeProblem(of: sections) : nil
        screen.sections = sections
        owner.entries[place.index] = .screen(screen)
        if let reason { throw refusal("\(effect.name) on the list of \(screen.entryId) (\(screen.feature)): \(reason)") }
        if let tooLarge { throw listTooLarge(tooLarge, effect: effect.name) }
    }

    /// The refusal of an effect that would leave a list over a size cap (the run is dropped).
    private func listTooLarge(_ problem: ListProblem, effect: String) -> FlowError {
        let place = problem.pointer.description.isEmpty ? "" : "at \(problem.pointer) of the list: "
        return .listTooLarge(flow: handlerFlow, action: action.type, reason: "\(effect): \(place)\(problem.message)")
    }

    private func resolveList(_ operation: ListEffect.Operation, effect: String) throws(FlowError) -> ResolvedListOperation {
        switch operation {
        case .setSections(let raw):
            return .setSections(try resolveSections(raw, effect: effect))
        case .setRows(let section, let rows):
            let id = try resolveId(section, effect: effect, what: "section")
            let list = try read(rows, effect: effect) { value throws(ListProblem) in try ScreenList.readRows(value) }
            try requireDeclaredKinds(of: list, in: rows, at: JSONPointer(), effect: effect)
            return .setRows(section: id, rows: list)
        case .insertRow(let section, let raw, let at):
            let id = try resolveId(section, effect: effect, what: "section")
            let row = try read(raw, effect: effect) { value throws(ListProblem) in try ScreenList.readRow(value) }
            try requireDeclaredKind(row.kind, in: raw, at: JSONPointer().appending("kind"), effect: effect)
            return .insertRow(section: id, row: row, at: try at.map { value throws(FlowError) in try resolveIndex(value, effect: effect) })
        case .removeRow(let row):
            return .removeRow(try resolveId(row, effect: effect, what: "row"))
        case .moveRow(let row, let section, let at):
            return .moveRow(
                try resolveId(row, effect: effect, what: "row"),
                section: try section.map { value throws(FlowError) in try resolveId(value, effect: effect, what: "section") },
                at: try at.map { value throws(FlowError) in try resolveIndex(value, effect: effect) })
        case .updateRow(let row, let values):
            let id = try resolveId(row, effect: effect, what: "row")
            let resolved = try resolve(values, effect: effect)
            guard let object = resolved.objectValue else {
                throw invalid(values, effect: effect, "values must be an object; found \(resolved.typeName)")
            }
            return .updateRow(id, values: object)
        }
    }

    /// A list written in an entry or a `setSections`, read once its params are filled in.
    private func resolveSections(_ raw: JSONValue, effect: String) throws(FlowError) -> [ListSection] {
        let sections = try read(raw, effect: effect) { value throws(ListProblem) in try ScreenList.readSections(value) }
        for (index, section) in sections.enumerated() {
            try requireDeclaredKinds(of: section.rows, in: raw, at: JSONPointer().appending(index).appending("rows"), effect: effect)
        }
        return sections
    }

    /// Rows a param supplies may carry only the row kinds the catalog declares: the capability
    /// check knows a definition's kinds from what it writes, so a row of any other kind would
    /// reach a client that never said it can draw it. Such a row is the action's fault.
    private func requireDeclaredKinds(of rows: [ListRow], in raw: JSONValue, at pointer: JSONPointer, effect: String) throws(FlowError) {
        for (index, row) in rows.enumerated() {
            try requireDeclaredKind(row.kind, in: raw, at: pointer.appending(index).appending("kind"), effect: effect)
        }
    }

    /// Refuses `kind`, found at `pointer` of `raw` filled in, when the catalog does not declare
    /// it and a param supplied it; a kind written out is the definition's own (declared by
    /// construction, or given by a Swift delegate's effects) and is kept.
    private func requireDeclaredKind(_ kind: String, in raw: JSONValue, at pointer: JSONPointer, effect: String) throws(FlowError) {
        guard !builder.catalog.declaredRowKinds.contains(kind), let param = Self.reference(in: raw, at: pointer) else { return }
        throw invalid(
            raw, effect: effect,
            "at \(pointer) of the value: row kind \(JSONValue.string(kind).abbreviatedJSON(limit: 40)) is not declared; a row from params may carry only a kind the definitions declare (written in a list, or matched by a rule's \"row\")",
            param: param)
    }

    /// Fills in `raw`'s params and reads it; a value a param made malformed is the action's
    /// fault (invalid params, at the param holding the problem, else the first param it uses), a
    /// literal one the definition's.
    private func read<T>(_ raw: JSONValue, effect: String, _ reader: (JSONValue) throws(ListProblem) -> T) throws(FlowError) -> T {
        let value = try resolve(raw, effect: effect)
        do throws(ListProblem) {
            return try reader(value)
        } catch where error.isTooLarge {
            throw listTooLarge(error, effect: effect)
        } catch {
            throw invalid(
                raw, effect: effect, "\(error.pointer.description.isEmpty ? "" : "at \(error.pointer) of the value: ")\(error.message)",
                param: Self.reference(in: raw, at: error.pointer))
        }
    }

    /// The param whose value holds `pointer` of `raw` filled in: the reference met walking `raw`
    /// along the pointer (a section written out with `"rows": {"$param": "rows"}` names `rows`
    /// for a problem in its rows, not a title param before it); nil when the pointer stays in
    /// what the definition wrote.
    private static func reference(in raw: JSONValue, at pointer: JSONPointer) -> String? {
        var node = raw
        for token in pointer.tokens {
            if let name = referenceName(node) { return name }
            switch node {
            case .object(let object):
                guard let member = object[token] else { return nil }
                node = member
            case .array(let elements):
                guard let index = Int(token), elements.indices.contains(index) else { return nil }
                node = elements[index]
            default:
                return nil
            }
        }
        return referenceName(node)
    }

    private static func referenceName(_ value: JSONValue) -> String? {
        guard case .object(let object) = value, object.count == 1 else { return nil }
        return object["$param"]?.stringValue
    }

    private func resolveId(_ raw: JSONValue, effect: String, what: String) throws(FlowError) -> String {
        let value = try resolve(raw, effect: effect)
        guard let text = value.stringValue, !text.isEmpty, text.unicodeScalars.count <= 200 else {
            throw invalid(raw, effect: effect, "a \(what) id must be a string of 1 to 200 characters; found \(value.abbreviatedJSON(limit: 40))")
        }
        return text
    }

    private func resolveIndex(_ raw: JSONValue, effect: String) throws(FlowError) -> Int {
        let value = try resolve(raw, effect: effect)
        guard let index = value.integerValue, index >= 0 else {
            throw invalid(raw, effect: effect, "at must be an index from 0; found \(value.abbreviatedJSON(limit: 40))")
        }
        return index
    }

    /// `invalid-params` at `param`, else the first param `raw` uses, or a refusal when it uses none.
    private func invalid(_ raw: JSONValue, effect: String, _ message: String, param: String? = nil) -> FlowError {
        guard let name = param ?? Self.firstReference(in: raw) else { return refusal("\(effect): \(message)") }
        return .invalidParams(path: JSONPointer(["params", name]).description, message: "\(action.type)'s \(effect) effect: \(message)")
    }

    /// Whether a string of `value`, or a key of one of its objects, holds U+0000.
    static func holdsNul(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): return text.utf8.contains(0)
        case .object(let object): return object.members.contains { $0.key.utf8.contains(0) || holdsNul($0.value) }
        case .array(let elements): return elements.contains(where: holdsNul)
        default: return false
        }
    }

    /// The name of the first `{"$param": name}` in `value` that `accept` takes (any, unless
    /// told), members and elements in order.
    private static func firstReference(in value: JSONValue, where accept: (String) -> Bool = { _ in true }) -> String? {
        switch value {
        case .object(let object):
            if object.count == 1, let name = object["$param"]?.stringValue { return accept(name) ? name : nil }
            for member in object.members { if let name = firstReference(in: member.value, where: accept) { return name } }
            return nil
        case .array(let elements):
            for element in elements { if let name = firstReference(in: element, where: accept) { return name } }
            return nil
        default:
            return nil
        }
    }

    // MARK: param references

    private func resolve(_ params: JSONObject, effect: String) throws(FlowError) -> JSONObject {
        guard Self.containsReference(.object(params)) else { return params }
        guard case .object(let resolved) = try resolve(.object(params), effect: effect) else { return params }
        return resolved
    }

    /// Replaces each `{"$param": name}` with the action's param `name`.
    private func resolve(_ value: JSONValue, effect: String) throws(FlowError) -> JSONValue {
        switch value {
        case .object(let object):
            if object.count == 1, let name = object["$param"]?.stringValue {
                guard let param = action.params[name] else {
                    throw .invalidParams(
                        path: JSONPointer(["params", name]).description,
                        message: "\(action.type) needs param \(JSONValue.string(name).jsonText) (used by its \(effect) effect)")
                }
                return param
            }
            guard Self.containsReference(value) else { return value }
            var members: [JSONObject.Member] = []
            members.reserveCapacity(object.count)
            for member in object.members {
                members.append(JSONObject.Member(key: member.key, value: try resolve(member.value, effect: effect)))
            }
            return .object(JSONObject(uniqueMembers: members))
        case .array(let elements):
            guard Self.containsReference(value) else { return value }
            var resolved: [JSONValue] = []
            resolved.reserveCapacity(elements.count)
            for element in elements { resolved.append(try resolve(element, effect: effect)) }
            return .array(resolved)
        default:
            return value
        }
    }

    /// Whether `value` holds a `{"$param": name}` anywhere (the definition reader checks lists
    /// without one whole, as the engine will read them).
    static func containsReference(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let object):
            if object.count == 1, object["$param"]?.stringValue != nil { return true }
            return object.members.contains { containsReference($0.value) }
        case .array(let elements):
            return elements.contains(where: containsReference)
        default:
            return false
        }
    }
}
