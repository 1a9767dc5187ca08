// FlowEffect: one change a handled action makes (push, present, setUser, …), as definitions write it.

import JSON

/// One effect of a handled action, applied to the flow that handled it.
///
/// Definitions write each effect as a one-key object (`{"push": "onboarding.second"}`); Swift
/// delegates return the same values, so both kinds of delegate change the tree the same way.
/// Params inside effects may hold `{"$param": "name"}`, replaced by the action's param.
///
/// ```swift
/// let effects: [FlowEffect] = [
///     .replaceRoot(.flow(name: "home", params: [:])),
///     .setUser(["onboarded": true]),
/// ]
/// ```
public enum FlowEffect: Sendable, Equatable {
    /// Pushes a screen or a child flow on the stack (stacked flows).
    case push(EntryTarget)
    /// Pops the top entry; refused when the stack has one entry.
    case pop
    /// Pops back to the topmost entry below the top that matches; refused when none does.
    case popTo(PopTarget)
    /// Pops back to the first entry; refused when the stack has one entry.
    case popToRoot
    /// Makes the stack that single entry (what is presented stays).
    case setRoot(EntryTarget)
    /// Presents a flow over the handling flow; refused when it already presents one.
    case present(Presentation)
    /// UIKit semantics: dismisses what the handling flow presents, else asks its presenter to
    /// dismiss the handling flow (or the presented flow that contains it).
    case dismiss
    /// Dismisses every presented flow of the whole tree; does nothing when none is presented.
    case dismissAll
    /// Selects a tab (tabbed flows).
    case selectTab(TabChoice)
    /// Makes the stack that single entry and dismisses everything the flow presents; the
    /// transition style is `crossFade`.
    case replaceRoot(EntryTarget)
    /// Records user state (`{"onboarded": true}`); reported in ``ActionOutcome/userChanges``.
    case setUser(JSONObject)
    /// Hands the action to the parent flow; the only effect of its rule.
    case bubble
    /// Returns a value to a screen still in the tree, once the rule's other effects have applied:
    /// the screen on top then (the one below after a pop, the presenter's after a dismiss), or
    /// the topmost screen showing ``ScreenResult/to``. The value lands in that screen's params.
    case result(ScreenResult)
    /// Changes the list of a screen still in the tree (``ListEffect``): the source screen's, or
    /// the topmost screen showing ``ListEffect/screen``.
    case list(ListEffect)

    /// The effect's name as written in definitions.
    public var name: String {
        switch self {
        case .push: return "push"
        case .pop: return "pop"
        case .popTo: return "popTo"
        case .popToRoot: return "popToRoot"
        case .setRoot: return "setRoot"
        case .present: return "present"
        case .dismiss: return "dismiss"
        case .dismissAll: return "dismissAll"
        case .selectTab: return "selectTab"
        case .replaceRoot: return "replaceRoot"
        case .setUser: return "setUser"
        case .bubble: return "bubble"
        case .result: return "result"
        case .list(let effect): return effect.name
        }
    }

    /// Every effect name, in the order error messages list them.
    public static let names = [
        "push", "pop", "popTo", "popToRoot", "setRoot", "present", "dismiss", "dismissAll",
        "selectTab", "replaceRoot", "setUser", "bubble", "result",
    ] + ListEffect.names

    /// Which entry `popTo` returns to.
    public enum PopTarget: Sendable, Equatable {
        /// The topmost screen below the top showing this feature.
        case feature(String)
        /// The entry with this id (`"e3"`, or a flow entry `"f2"`).
        case id(String)
        /// The entry whose id is the action's param of this name.
        case idParam(String)
    }

    /// What `result` returns and where: `{"into": "address", "value": {"$param": "address"},
    /// "to": "checkout.review"}`.
    public struct ScreenResult: Sendable, Equatable {
        /// The param of the receiving screen that the value is written to.
        public var into: String
        /// The value; `{"$param": name}` inside it is replaced by the action's param.
        public var value: JSONValue
        /// The feature of the receiving screen; `nil` for the screen on top after the effects.
        public var to: String?

        public init(into: String, value: JSONValue, to: String? = nil) {
            self.into = into
            self.value = value
            self.to = to
        }
    }

    /// Which tab `selectTab` selects.
    public enum TabChoice: Sendable, Equatable {
        case index(Int)
        /// The action's integer param of this name.
        case param(String)
    }

    /// What `present` shows and how.
    public struct Presentation: Sendable, Equatable {
        public var flow: String
        public var params: JSONObject
        public var style: PresentationStyle

        public init(flow: String, params: JSONObject = [:], style: PresentationStyle = .fixed("automatic")) {
            self.flow = flow
            self.params = params
            self.style = style
        }
    }

    /// The modal presentation style, fixed or chosen by the `horizontalSizeClass` trait.
    public enum PresentationStyle: Sendable, Equatable {
        case fixed(String)
        /// `compact` is used when the trait is `compact` or missing (phones first), `regular`
        /// when it is `regular`.
        case adaptive(compact: String, regular: String)

        /// UIKit's `UIModalPresentationStyle` names, the styles a definition may use.
        public static let knownStyles = [
            "automatic", "fullScreen", "pageSheet", "formSheet", "currentContext", "custom",
            "overFullScreen", "overCurrentContext", "popover",
        ]

        /// The style for the session's traits.
        public func resolved(traits: [String: String]) -> String {
            switch self {
            case .fixed(let style): return style
            case .adaptive(let compact, let regular):
                return traits["horizontalSizeClass"] == "regular" ? regular : compact
            }
        }
    }
}

extension FlowEffect {
    /// Whether the effect brings a screen that was below or behind back on top, so a `result`
    /// has a screen to return to.
    var revealsScreen: Bool {
        switch self {
        case .pop, .popTo, .popToRoot, .dismiss: return true
        default: return false
        }
    }

    /// Whether the effect works on a stack, so a tabbed flow cannot apply it.
    var needsStack: Bool {
        switch self {
        case .push, .pop, .popTo, .popToRoot, .setRoot, .replaceRoot: return true
        default: return false
        }
    }
}
