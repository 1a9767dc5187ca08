// EngineSuite: the engine conformance suite's version and the features every release of it must cover.

/// The engine conformance suite (engine-suite/README.md): cases generated from the Swift engine
/// that every port of the engine answers byte for byte through its runner (``EngineRunner``).
public enum EngineSuite {
    /// The suite's format version, in every case's header. It grows when a line's shape or the
    /// protocol changes, not when cases are added or the engine's answers change (those show as
    /// a diff of the checked-in cases).
    public static let specVersion = 1

    /// Every feature the suite must exercise, with what counts as exercising it; the generator
    /// fails when one has no case. Each is observed from what the engine did on a step (the
    /// rule that handled it, the transition, the tree before and after), not from labels.
    public static let features: [(name: String, meaning: String)] = [
        ("effect.push", "a handling rule's push ran"),
        ("effect.pop", "a handling rule's pop ran"),
        ("effect.popTo", "a handling rule's popTo ran"),
        ("effect.popToRoot", "a handling rule's popToRoot ran"),
        ("effect.setRoot", "a handling rule's setRoot ran"),
        ("effect.present", "a handling rule's present ran"),
        ("effect.dismiss", "a handling rule's dismiss ran"),
        ("effect.dismissAll", "a handling rule's dismissAll ran"),
        ("effect.selectTab", "a handling rule's selectTab ran"),
        ("effect.replaceRoot", "a handling rule's replaceRoot ran"),
        ("effect.setUser", "an action changed the user's state"),
        ("effect.bubble", "an action was handled by a flow above the source screen's"),
        ("effect.result", "a transition returned a result to a screen"),
        ("effect.sequence", "a handling rule ran two navigation effects in order"),
        ("entry.screenParams", "a screen with params was on the tree"),
        ("entry.flow", "a child flow was an entry of a stack"),
        ("entry.handoff", "a hand-off was on the tree"),
        ("entry.initialWhen", "a tree was built from an initial entry with a when"),
        ("nesting.tabbedInStacked", "a tabbed flow inside a stacked one"),
        ("nesting.flowInTab", "a child flow as a tab"),
        ("nesting.presented", "a presented flow"),
        ("nesting.presentedOverPresented", "a presented flow presenting another"),
        ("action.back", "generic back applied"),
        ("action.params", "an applied action carried params"),
        ("interaction.started", "an interactive action opened an interaction"),
        ("interaction.updated", "interaction.update moved it"),
        ("interaction.finished", "interaction.end finished it"),
        ("interaction.cancelled", "interaction.end or interaction.cancel cancelled it"),
        ("link.followed", "a deep link rebuilt the stack at once"),
        ("link.pending", "a deep link waited for its condition"),
        ("link.resumed", "a waiting link was followed after another action"),
        ("link.cancelled", "link.cancel dropped a waiting link"),
        ("guard.waiting", "a guard showed its flow and kept the action pending"),
        ("guard.resumed", "a pending action resumed after its guard's flow"),
        ("guard.dropped", "a pending action was dropped"),
        ("condition.flag", "a matched rule's when or guard read a flag"),
        ("condition.user", "a matched rule's when or guard read user state"),
        ("condition.attribute", "a matched rule's when read an attribute"),
        ("condition.param", "a matched rule's when read a param"),
        ("condition.trait", "a matched rule's when read a trait"),
        ("predictions", "an answer with predictions (?predict=true)"),
        ("dryRun", "a dry run (?dryRun=true)"),
        ("available", "the available actions answer"),
        ("refusal.stale-source", "refused 409 stale-source"),
        ("refusal.unhandled", "refused 422 unhandled"),
        ("refusal.refused", "refused 422 refused"),
        ("refusal.interaction-pending", "refused 409 interaction-pending"),
        ("refusal.no-interaction", "refused 409 no-interaction"),
        ("refusal.invalid-params", "refused 400 invalid-params"),
        ("refusal.unknown-link", "refused 422 unknown-link"),
        ("refusal.link-refused", "refused: a link's action was refused (link-refused)"),
        ("list.sections", "a screen with a list (sections of rows) was on the tree"),
        ("list.rowTap", "an applied action tapped a row (row), matched by a rule's row kind"),
        ("list.only", "a version changed lists and nothing else (transition list)"),
        ("list.withNavigation", "a version changed a list and navigated (a pop that inserts a row)"),
        ("list.rowsInserted", "a transition's list changes inserted rows"),
        ("list.rowsDeleted", "a transition's list changes deleted rows"),
        ("list.rowsMoved", "a transition's list changes moved rows"),
        ("list.rowsReloaded", "a transition's list changes reloaded rows"),
        ("list.sectionsChanged", "a transition's list changes inserted, deleted, moved or reloaded sections"),
        ("effect.setSections", "a handling rule's setSections ran"),
        ("effect.setRows", "a handling rule's setRows ran"),
        ("effect.insertRow", "a handling rule's insertRow ran"),
        ("effect.removeRow", "a handling rule's removeRow ran"),
        ("effect.moveRow", "a handling rule's moveRow ran"),
        ("effect.updateRow", "a handling rule's updateRow ran"),
        ("refusal.stale-row", "refused 409 stale-row"),
        ("refusal.list-too-large", "refused 422 list-too-large: a list effect would pass a size cap"),
    ]
}
