// ShopFlows: a small shop exercising results, hand-offs and guards, independent of the sample app.

import FlowEngine

enum ShopFlows {
    static let app = """
        {"name": "app", "kind": "stacked", "initial": ["shop.home"],
         "on": {
           "shop.checkout": [{"from": "shop.home",
                              "guard": {"when": {"user": "loggedIn", "is": true}, "else": {"present": {"flow": "login", "style": "pageSheet"}}},
                              "do": [{"present": {"flow": "checkout", "style": "fullScreen"}}]}],
           "shop.orders": [{"from": "shop.home",
                            "guard": {"when": {"user": "loggedIn", "is": true}, "else": [{"push": {"flow": "login"}}]},
                            "do": [{"push": "shop.orders"}]}],
           "shop.swipe": [{"from": "shop.home", "interactive": true,
                           "guard": {"when": {"user": "loggedIn", "is": true}, "else": {"present": "login"}},
                           "do": [{"push": "shop.orders"}]}],
           "login.restart": [{"via": "login", "do": [{"replaceRoot": {"screen": "shop.home"}}, {"setUser": {"loggedIn": true}}]}],
           "login.done": [{"via": "login", "do": [{"setUser": {"loggedIn": true}}, {"pop": {}}]}],
           "shop.premium": [{"from": "shop.home",
                             "guard": {"when": {"user": "premium", "is": true}, "else": {"present": "paywall"}},
                             "do": [{"push": "shop.vault"}]}]
         }}
        """
    static let login = """
        {"name": "login", "kind": "stacked", "initial": ["login.form"],
         "on": {
           "login.submit": [{"from": "login.form",
                             "guard": {"when": {"user": "acceptedTerms", "is": true}, "else": {"present": "terms"}},
                             "do": [{"setUser": {"loggedIn": true}}, {"dismiss": {}}]}],
           "login.done": [{"from": "login.form", "do": [{"bubble": {}}]}],
           "login.cancel": [{"from": "login.form", "do": [{"dismiss": {}}]}],
           "login.stay": [{"from": "login.form", "do": [{"setUser": {"loggedIn": true}}]}]
         }}
        """
    static let terms = """
        {"name": "terms", "kind": "stacked", "initial": ["terms.text"],
         "on": {"terms.accept": [{"from": "terms.text", "do": [{"setUser": {"acceptedTerms": true}}, {"dismiss": {}}]}],
                "terms.decline": [{"from": "terms.text", "do": [{"dismiss": {}}]}]}}
        """
    static let checkout = """
        {"name": "checkout", "kind": "stacked", "initial": ["checkout.cart"],
         "on": {
           "checkout.review": [{"from": "checkout.cart", "do": [{"push": "checkout.review"}]}],
           "checkout.chooseAddress": [{"from": "checkout.review", "do": [{"present": {"flow": "address", "style": "pageSheet"}}]}],
           "checkout.pickDate": [{"from": "checkout.review", "do": [{"push": "checkout.date"}]}],
           "checkout.dateChosen": [{"from": "checkout.date", "params": {"date": "string"},
                                    "do": [{"pop": {}}, {"result": {"into": "date", "value": {"$param": "date"}}}]}],
           "checkout.close": [{"do": [{"dismiss": {}}]}]
         }}
        """
    static let address = """
        {"name": "address", "kind": "stacked", "initial": ["address.list"],
         "on": {
           "address.chosen": [{"from": "address.list", "params": {"address": "object"},
                               "do": [{"dismiss": {}}, {"result": {"into": "address", "value": {"$param": "address"}}}]}],
           "address.add": [{"from": "address.list", "do": [{"push": "address.form"}]}],
           "address.saved": [{"from": "address.form", "params": {"address": "object"},
                              "do": [{"dismiss": {}}, {"result": {"into": "address", "value": {"saved": true, "address": {"$param": "address"}}, "to": "checkout.review"}}]}],
           "address.useCart": [{"from": "address.list", "do": [{"dismiss": {}}, {"result": {"into": "note", "value": "from cart", "to": "checkout.cart"}}]}]
         }}
        """
    static let paywall = """
        {"name": "paywall", "kind": "stacked", "initial": ["paywall.offer"],
         "on": {
           "paywall.buy": [{"from": "paywall.offer", "params": {"productId": "string"},
                            "do": [{"push": {"handoff": "purchase", "params": {"productId": {"$param": "productId"}}}}]}],
           "purchase.completed": [{"from": "purchase", "params": {"transactionId": "string"},
                                   "do": [{"setUser": {"premium": true}}, {"dismiss": {}}]}],
           "purchase.cancelled": [{"from": "purchase", "do": [{"pop": {}}]}],
           "purchase.failed": [{"from": "purchase", "params": {"reason": "string"},
                                "do": [{"pop": {}}, {"result": {"into": "error", "value": {"$param": "reason"}}}]}],
           "paywall.close": [{"from": "paywall.offer", "do": [{"dismiss": {}}]}]
         }}
        """

    static let catalog = Fixtures.catalog(app, login, terms, checkout, address, paywall)

    static func session(_ user: [String: Bool] = [:]) throws -> Session {
        var context = FlowContext(userId: "shopper")
        for (key, value) in user { context.user[key] = .bool(value) }
        return try Session(catalog: catalog, context: context)
    }
}
