// JSONPointer: an RFC 6901 pointer, used to say where in a document a problem is.

/// An RFC 6901 JSON Pointer such as `/on/onboarding.completed/0/do/0/push`.
///
/// Tokens are escaped when rendered (`~` as `~0`, `/` as `~1`), so an action type such as
/// `a/b` shows as `/on/a~1b`.
///
/// ```swift
/// JSONPointer().appending("on").appending("a/b").appending(0).description   // "/on/a~1b/0"
/// ```
public struct JSONPointer: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The unescaped reference tokens, outermost first.
    public private(set) var tokens: [String]

    /// The pointer to the whole document (rendered as the empty string).
    public init(_ tokens: [String] = []) {
        self.tokens = tokens
    }

    /// This pointer extended by an object key.
    public func appending(_ token: String) -> JSONPointer {
        var copy = self
        copy.tokens.append(token)
        return copy
    }

    /// This pointer extended by an array index.
    public func appending(_ index: Int) -> JSONPointer {
        appending(String(index))
    }

    /// The pointer with `prefix`'s tokens in front.
    public func prefixed(by prefix: JSONPointer) -> JSONPointer {
        JSONPointer(prefix.tokens + tokens)
    }

    /// The rendered pointer: empty for the whole document, else `/token/token…`.
    public var description: String {
        var text = ""
        for token in tokens {
            text += "/"
            text += Self.escape(token)
        }
        return text
    }

    /// Escapes one reference token (`~` → `~0`, `/` → `~1`).
    public static func escape(_ token: String) -> String {
        guard token.contains(where: { $0 == "~" || $0 == "/" }) else { return token }
        var escaped = ""
        for character in token {
            switch character {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
