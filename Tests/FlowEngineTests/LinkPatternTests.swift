// LinkPatternTests: which link a URI opens — every pattern form, precedence, typed values, malformed URIs.

import JSON
import Testing

import FlowEngine

struct LinkPatternTests {
    /// A root flow whose links cover every pattern form; `t.open` takes any param.
    static let catalog = Fixtures.catalog(#"""
        {"name": "app", "kind": "stacked", "initial": ["a.root"],
         "on": {"t.open": [{"do": [{"push": "a.page"}]}]},
         "links": [
           {"pattern": "/home"},
           {"pattern": "/home/{tab}", "params": {"tab": "integer"}},
           {"pattern": "/items/{id}/detail"},
           {"pattern": "/items/new/detail"},
           {"pattern": "myapp://example.com/promo/{code}"},
           {"pattern": "/promo/{code}"},
           {"pattern": "/search?q={query}"},
           {"pattern": "/search?q={query}&sort={order}"},
           {"pattern": "/filter?kind=shoes&size={size}", "params": {"size": "number"}},
           {"pattern": "/filter?kind={kind}&size={size}"},
           {"pattern": "/files/{name}"},
           {"pattern": "/caf%C3%A9/menu"},
           {"pattern": "/price/{amount}", "params": {"amount": "number"}},
           {"pattern": "/flag/{on}", "params": {"on": "boolean"}},
           {"pattern": "/a/{x}"},
           {"pattern": "/{y}/b"},
           {"pattern": "/", "actions": [{"type": "t.open"}]},
           {"pattern": "/echo/{word}", "actions": [{"type": "t.open", "params": {"deep": [{"w": {"$link": "word"}}, "fixed"]}}]}
         ]}
        """#)

    /// URIs and the pattern they open with the values captured.
    static let matches: [(uri: String, pattern: String, params: JSONObject)] = [
        ("/home", "/home", [:]),
        ("/home/", "/home", [:]),
        ("myapp://x/home", "/home", [:]),
        ("https://example.com/home?utm_source=mail#top", "/home", [:]),
        ("myapp:/home", "/home", [:]),
        ("myapp:home", "/home", [:]),
        ("/home/1", "/home/{tab}", ["tab": 1]),
        ("/home//1/", "/home/{tab}", ["tab": 1]),
        ("/home/-3", "/home/{tab}", ["tab": -3]),
        ("/items/42/detail", "/items/{id}/detail", ["id": "42"]),
        ("/items/new/detail", "/items/new/detail", [:]),
        ("/items/n%65w/detail", "/items/new/detail", [:]),
        ("myapp://example.com/promo/X1", "myapp://example.com/promo/{code}", ["code": "X1"]),
        ("MYAPP://Example.COM:8080/promo/X1", "myapp://example.com/promo/{code}", ["code": "X1"]),
        ("myapp://user@example.com/promo/X1", "myapp://example.com/promo/{code}", ["code": "X1"]),
        ("myapp://other.com/promo/X1", "/promo/{code}", ["code": "X1"]),
        ("https://example.com/promo/X1", "/promo/{code}", ["code": "X1"]),
        ("/promo/X1", "/promo/{code}", ["code": "X1"]),
        ("/search?q=shoes", "/search?q={query}", ["query": "shoes"]),
        ("/search?q=red+shoes&page=2", "/search?q={query}", ["query": "red shoes"]),
        ("/search?sort=price&q=a%26b", "/search?q={query}&sort={order}", ["query": "a&b", "order": "price"]),
        ("/search?q=first&q=second", "/search?q={query}", ["query": "first"]),
        ("/search?q=", "/search?q={query}", ["query": ""]),
        ("/filter?size=42.5&kind=shoes", "/filter?kind=shoes&size={size}", ["size": 42.5]),
        ("/filter?size=42.5&kind=boots", "/filter?kind={kind}&size={size}", ["kind": "boots", "size": "42.5"]),
        ("/files/a%2Fb", "/files/{name}", ["name": "a/b"]),
        ("/files/caf%C3%A9", "/files/{name}", ["name": "café"]),
        ("/files/a+b", "/files/{name}", ["name": "a+b"]),
        ("/files/%7Bx%7D", "/files/{name}", ["name": "{x}"]),
        ("/café/menu", "/caf%C3%A9/menu", [:]),
        ("/caf%c3%a9/menu", "/caf%C3%A9/menu", [:]),
        ("/price/9.99", "/price/{amount}", ["amount": 9.99]),
        ("/price/3", "/price/{amount}", ["amount": 3]),
        ("/price/-1e3", "/price/{amount}", ["amount": -1000]),
        ("/flag/true", "/flag/{on}", ["on": true]),
        ("/flag/FALSE", "/flag/{on}", ["on": false]),
        ("/a/b", "/a/{x}", ["x": "b"]),
        ("/z/b", "/{y}/b", ["y": "z"]),
        ("/", "/", [:]),
        ("myapp://host", "/", [:]),
        ("https://example.com/?x=1", "/", [:]),
    ]

    /// Each URI opens the expected pattern with its values typed.
    @Test(arguments: matches)
    func resolvesToPattern(uri: String, pattern: String, params: JSONObject) throws {
        let match = try FlowEngine.resolveLink(uri, catalog: Self.catalog)
        #expect(match.pattern == pattern)
        #expect(match.params == params)
    }

    /// Typed values keep their JSON type: an integer stays an integer, a number with a fraction a number.
    @Test func typedValuesHaveTheirJSONType() throws {
        #expect(try FlowEngine.resolveLink("/home/7", catalog: Self.catalog).params["tab"].map { if case .integer = $0 { true } else { false } } == true)
        #expect(try FlowEngine.resolveLink("/price/2.5", catalog: Self.catalog).params["amount"].map { if case .number = $0 { true } else { false } } == true)
        #expect(try FlowEngine.resolveLink("/files/x", catalog: Self.catalog).params["name"]?.stringValue == "x")
    }

    /// The match names the link's index and substitutes `$link` at any depth of its actions.
    @Test func matchCarriesSubstitutedActions() throws {
        let match = try FlowEngine.resolveLink("/echo/hi%20there", catalog: Self.catalog)
        #expect(match.index == 17)
        #expect(match.actions == [FlowAction(type: "t.open", params: ["deep": [["w": "hi there"], "fixed"]])])
        #expect(match.when == nil)
        #expect(try FlowEngine.resolveLink("/", catalog: Self.catalog).actions == [FlowAction(type: "t.open")])
        #expect(try FlowEngine.resolveLink("/home", catalog: Self.catalog).actions.isEmpty)
    }

    /// URIs that no pattern matches: case-sensitive literals, missing query keys, another
    /// segment count, a scheme-and-host pattern with another host.
    @Test(arguments: [
        "/Home", "/items/new", "/items/1/2/detail", "/search", "/search?query=x", "/filter?size=1",
        "/filter?kind=boots", "/unknown/path/here", "/caf%C3%A9/Menu",
    ])
    func unknownLinks(uri: String) {
        #expect(throws: FlowError.unknownLink(uri: uri)) { try FlowEngine.resolveLink(uri, catalog: Self.catalog) }
    }

    /// Malformed URIs are invalid params at the field the caller names.
    @Test(arguments: [
        "", "home", "home/1", "/home page", "/home\n", "//home/1", "/home/%zz", "/home/%4", "/home/%FF", "?q=1",
        "1abc:/home", ":/home", "/search?q=%", "/" + String(repeating: "a", count: 2048),
        "http://[bad", "myapp://[::1/home", "myapp://[]/home", "myapp://[::g]/home", "myapp://u@[::1]/home",
        "myapp://ex]ample/home", "myapp://a{b}/home", "myapp://a\\b/home", "/home/a|b", "/home/[1]", "/home?q={x}",
        "/home#a^b", "/modal/\"Hi\"",
    ])
    func malformedURIs(uri: String) {
        #expect(throws: FlowError.self) { try FlowEngine.resolveLink(uri, catalog: Self.catalog, field: "/link") }
        do throws(FlowError) {
            _ = try FlowEngine.resolveLink(uri, catalog: Self.catalog, field: "/link")
        } catch {
            guard case .invalidParams(let path, let message) = error else {
                Issue.record("\(uri.prefix(40)): expected invalid-params, got \(error)")
                return
            }
            #expect(path == "/link")
            #expect(!message.isEmpty)
        }
    }

    /// An IP-literal host keeps its brackets (the one place a URI holds them), with a port or not.
    @Test(arguments: ["myapp://[::1]/home", "myapp://[2001:db8::7]:8080/home", "https://[::ffff:10.0.0.1]/home"])
    func ipLiteralHosts(uri: String) throws {
        #expect(try FlowEngine.resolveLink(uri, catalog: Self.catalog).pattern == "/home")
    }

    /// A URI of exactly 2048 bytes is accepted; one more is not.
    @Test func lengthLimit() throws {
        let longest = "/files/" + String(repeating: "x", count: 2048 - 7)
        #expect(try FlowEngine.resolveLink(longest, catalog: Self.catalog).pattern == "/files/{name}")
        #expect(throws: FlowError.self) { try FlowEngine.resolveLink(longest + "x", catalog: Self.catalog) }
    }

    /// A value that does not convert to its placeholder's type is invalid params naming the
    /// placeholder and the type; no other pattern is tried.
    @Test(arguments: [
        ("/home/abc", "{tab}", "integer"), ("/home/1.5", "{tab}", "integer"), ("/home/99999999999999999999", "{tab}", "integer"),
        ("/price/abc", "{amount}", "number"), ("/price/inf", "{amount}", "number"), ("/price/0x10", "{amount}", "number"),
        ("/price/1e999", "{amount}", "number"), ("/flag/yes", "{on}", "boolean"), ("/filter?kind=shoes&size=big", "{size}", "number"),
    ])
    func wrongTypes(uri: String, placeholder: String, type: String) {
        do throws(FlowError) {
            let match = try FlowEngine.resolveLink(uri, catalog: Self.catalog)
            Issue.record("\(uri) resolved to \(match.pattern)")
        } catch {
            guard case .invalidParams(let path, let message) = error else {
                Issue.record("expected invalid-params, got \(error)")
                return
            }
            #expect(path == "/params/uri")
            #expect(message.contains(placeholder) && message.contains(type), "\(message)")
        }
    }

    /// With no root flow, or one without links, every URI is unknown.
    @Test func catalogsWithoutLinks() {
        #expect(throws: FlowError.unknownLink(uri: "/home")) { try FlowEngine.resolveLink("/home", catalog: FlowCatalog()) }
        let plain = Fixtures.catalog(#"{"name": "app", "kind": "stacked", "initial": ["a"]}"#)
        #expect(throws: FlowError.unknownLink(uri: "/home")) { try FlowEngine.resolveLink("/home", catalog: plain) }
    }

    /// A pattern read in code gives its parts and placeholders.
    @Test func patternsReadInCode() throws {
        let pattern = try LinkPattern("MyApp://Example.com/home/{tab}?from={source}&v=2")
        #expect(pattern.scheme == "myapp")
        #expect(pattern.host == "example.com")
        #expect(pattern.path == [.literal("home"), .placeholder("tab")])
        #expect(pattern.query.map(\.key) == ["from", "v"])
        #expect(pattern.placeholders == ["tab", "source"])
        #expect(pattern.description == "MyApp://Example.com/home/{tab}?from={source}&v=2")
        #expect(throws: LinkPattern.SyntaxError.self) { try LinkPattern("home/{tab}") }
    }
}
