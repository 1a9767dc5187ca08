// LabFlowDocuments: a small catalog of flow definitions exercising every effect, as JSON text,
// shared by the engine's tests and the client's navigation-plan tests. `ghost` is deliberately
// undefined (for the broken-definition case).

public enum LabFlowDocuments {
    public static let app = #"""
        {"name": "app", "kind": "stacked", "initial": ["a.root"], "on": {
          "t.push": [{"do": [{"push": "a.next"}]}],
          "t.pushFlow": [{"do": [{"push": {"flow": "inner", "params": {"origin": "push"}}}]}],
          "t.pushParams": [{"params": {"v": "string"}, "do": [{"push": {"screen": "a.param", "params": {"v": {"$param": "v"}, "fixed": 1}}}]}],
          "t.pushUndeclared": [{"do": [{"push": {"screen": "a.param", "params": {"v": {"$param": "v"}}}}]}],
          "t.pop": [{"do": [{"pop": {}}]}],
          "t.popTo": [{"do": [{"popTo": "a.root"}]}],
          "t.popToId": [{"params": {"target": "string"}, "do": [{"popTo": {"id": {"$param": "target"}}}]}],
          "t.popToRoot": [{"do": [{"popToRoot": {}}]}],
          "t.setRoot": [{"do": [{"setRoot": "a.fresh"}]}],
          "t.present": [{"do": [{"present": {"flow": "sheet", "params": {"note": "hi"},
                                             "style": {"compact": "fullScreen", "regular": "formSheet"}}}]}],
          "t.closeFromApp": [{"do": [{"dismiss": {}}]}],
          "t.dismissAll": [{"do": [{"dismissAll": {}}]}],
          "t.replaceRoot": [{"do": [{"replaceRoot": "tabs"}]}],
          "t.setUser": [{"params": {"level": "integer"}, "do": [{"setUser": {"level": {"$param": "level"}, "seen": true}}]}],
          "t.pushThenPresent": [{"do": [{"push": "a.next"}, {"present": "sheet"}]}],
          "t.onlyFromNext": [{"from": "a.next", "do": [{"pop": {}}]}],
          "t.flagged": [{"when": {"flag": "beta", "is": true}, "do": [{"push": "a.beta"}]}],
          "t.interactivePush": [{"interactive": true, "do": [{"push": "a.next"}]}],
          "t.ghost": [{"do": [{"push": {"flow": "ghost"}}]}],
          "t.presentTabs": [{"do": [{"present": {"flow": "tabs", "style": "formSheet"}}]}],
          "t.pushPopPop": [{"do": [{"push": "a.next"}, {"pop": {}}, {"pop": {}}]}]
        }}
        """#

    public static let tabs = #"""
        {"name": "tabs", "kind": "tabbed", "initial": ["tab.a", "tab.b", {"flow": "inner"}], "selected": 0, "on": {
          "t.selectTab": [{"do": [{"selectTab": 1}]}],
          "t.selectTabParam": [{"params": {"i": "integer"}, "do": [{"selectTab": {"$param": "i"}}]}],
          "t.tabsPresent": [{"do": [{"present": "sheet"}]}]
        }}
        """#

    public static let inner = #"""
        {"name": "inner", "kind": "stacked", "initial": ["inner.first"], "on": {
          "t.innerPush": [{"do": [{"push": "inner.next"}]}],
          "t.innerBubble": [{"from": "inner.first", "do": [{"bubble": {}}]}],
          "t.innerDismiss": [{"do": [{"dismiss": {}}]}]
        }}
        """#

    public static let sheet = #"""
        {"name": "sheet", "kind": "stacked", "initial": ["sheet.first"], "on": {
          "t.dismiss": [{"from": ["sheet.first", "sheet.next"], "do": [{"dismiss": {}}]}],
          "t.sheetPush": [{"do": [{"push": "sheet.next"}]}],
          "t.sheetPresent": [{"do": [{"present": {"flow": "sheet", "style": "pageSheet"}}]}],
          "t.dismissThenPush": [{"do": [{"dismiss": {}}, {"push": "sheet.next"}]}]
        }}
        """#

    /// The four documents, in order.
    public static let all = [app, tabs, inner, sheet]
}
