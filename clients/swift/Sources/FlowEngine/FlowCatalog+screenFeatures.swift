// FlowCatalog+screenFeatures: the screen features a flow can put on screen, with its child flows'.

/// What a flow can show: every screen feature its definition can put on a stack and those of
/// the child flows it starts with, pushes, sets as root or presents, followed through the catalog.
///
/// ```swift
/// let shown = catalog.screenFeatures(of: "app")
/// shown.features          // ["home.first", "home.second", "modal", "onboarding.first", …]
/// shown.missing(from: ["home.first"])   // what a client rendering only home.first lacks
/// ```
public struct ScreenFeatures: Sendable, Equatable {
    /// Every screen feature the flow and the flows it reaches can show.
    public var features: Set<String>
    /// The flows followed, the flow itself included, in name order.
    public var flows: [String]
    /// Flows named by a reached flow that the catalog does not define (their screens are unknown).
    public var undefinedFlows: [String]
    /// The row kinds (list cells) the flows can show: features for capabilities, as screens
    /// are, but never the source screen of an action, so kept apart from ``features``.
    public var rowKinds: Set<String>

    public init(features: Set<String> = [], flows: [String] = [], undefinedFlows: [String] = [], rowKinds: Set<String> = []) {
        self.features = features
        self.flows = flows
        self.undefinedFlows = undefinedFlows
        self.rowKinds = rowKinds
    }

    /// What a client must render: the screen features and the row kinds.
    public var rendered: Set<String> { features.union(rowKinds) }

    /// The features and row kinds shown that `renderable` lacks, in name order; empty when it
    /// renders them all.
    public func missing(from renderable: Set<String>) -> [String] {
        rendered.subtracting(renderable).sorted()
    }
}

extension FlowDefinition {
    /// The screens this definition itself can put on a stack (initial entries, whatever their
    /// `when`, and the targets of push, setRoot and replaceRoot, its guards' included; a
    /// hand-off counts as a screen whose feature is its kind) and the child flows it names as
    /// entries or presents. Conditions are not evaluated: a screen is counted if any rule can show it.
    public var ownScreens: (features: Set<String>, childFlows: Set<String>) {
        var features: Set<String> = []
        var flows: Set<String> = []
        func add(_ target: EntryTarget) {
            switch target {
            case .screen(let feature, _, _), .handoff(let feature, _): features.insert(feature)
            case .flow(let name, _): flows.insert(name)
            }
        }
        for entry in initial { add(entry.target) }
        for handler in handlers {
            for rule in handler.rules {
                for effect in rule.effects + (rule.guarded?.otherwise ?? []) {
                    switch effect {
                    case .push(let target), .setRoot(let target), .replaceRoot(let target): add(target)
                    case .present(let presentation): flows.insert(presentation.flow)
                    case .pop, .popTo, .popToRoot, .dismiss, .dismissAll, .selectTab, .setUser, .bubble, .result, .list: break
                    }
                }
            }
        }
        return (features, flows)
    }
}

extension FlowDefinition {
    /// The row kinds this definition can put in a list: those of the rows written in its
    /// entries' `sections` and in its list effects, and those its rules match (`row`). Rows a
    /// param supplies whole cannot be known here; the engine holds their kinds to the catalog's
    /// ``FlowCatalog/declaredRowKinds``, the union of these.
    public var ownRowKinds: Set<String> {
        var kinds: Set<String> = []
        func add(_ target: EntryTarget) {
            guard case .screen(_, _, let sections?) = target else { return }
            kinds.formUnion(ListEffect(operation: .setSections(sections)).literalKinds)
        }
        for entry in initial { add(entry.target) }
        for handler in handlers {
            for rule in handler.rules {
                kinds.formUnion(rule.row ?? [])
                for effect in rule.effects + (rule.guarded?.otherwise ?? []) {
                    switch effect {
                    case .push(let target), .setRoot(let target), .replaceRoot(let target): add(target)
                    case .list(let list): kinds.formUnion(list.literalKinds)
                    default: break
                    }
                }
            }
        }
        return kinds
    }

    /// The features a client must render for this definition: its screens and its row kinds.
    public var ownRenderedFeatures: Set<String> { ownScreens.features.union(ownRowKinds) }

    /// The features that can hold a list: screens written with `sections` in an entry.
    public var ownListScreens: Set<String> {
        var features: Set<String> = []
        func add(_ target: EntryTarget) {
            if case .screen(let feature, _, _?) = target { features.insert(feature) }
        }
        for entry in initial { add(entry.target) }
        for handler in handlers {
            for rule in handler.rules {
                for effect in rule.effects + (rule.guarded?.otherwise ?? []) {
                    switch effect {
                    case .push(let target), .setRoot(let target), .replaceRoot(let target): add(target)
                    default: break
                    }
                }
            }
        }
        return features
    }
}

extension FlowCatalog {
    /// The screen features `flow` can show, following its child flows through this catalog;
    /// each flow is visited once, so flows that reach each other (a modal presenting home that
    /// presents the modal) finish. A flow the catalog lacks is listed in `undefinedFlows`.
    public func screenFeatures(of flow: String = FlowCatalog.rootFlowName) -> ScreenFeatures {
        var result = ScreenFeatures()
        var visited: Set<String> = [flow]
        var undefined: Set<String> = []
        var queue = [flow]
        var position = 0
        while position < queue.count {
            let name = queue[position]
            position += 1
            guard let definition = definitions[name] else {
                undefined.insert(name)
                continue
            }
            let own = definition.ownScreens
            result.features.formUnion(own.features)
            result.rowKinds.formUnion(definition.ownRowKinds)
            for child in own.childFlows.sorted() where visited.insert(child).inserted {
                queue.append(child)
            }
        }
        result.flows = visited.subtracting(undefined).sorted()
        result.undefinedFlows = undefined.sorted()
        return result
    }
}
