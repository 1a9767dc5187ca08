// EntryId: how entry ids are shown to clients ("e7" for a screen, "f3" for a flow) and read back.

/// Ids are integers inside the tree (compact and cheap to compare) and prefixed strings outside:
/// `e` for screens, `f` for flow controllers, both drawn from one counter per session.
enum EntryId {
    static let screenPrefix: UInt8 = 0x65  // e
    static let flowPrefix: UInt8 = 0x66  // f

    /// Reads `"e7"` or `"f3"`; the digits must be canonical (no sign, no leading zero).
    static func parse(_ text: String) -> (isFlow: Bool, number: Int)? {
        let utf8 = text.utf8
        guard let first = utf8.first, first == screenPrefix || first == flowPrefix else { return nil }
        let digits = utf8.dropFirst()
        guard !digits.isEmpty, digits.count <= 18, digits.first != 0x30 else { return nil }
        var number = 0
        for byte in digits {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            number = number * 10 + Int(byte - 0x30)
        }
        return (first == flowPrefix, number)
    }

    static func screen(_ number: Int) -> String { "e\(number)" }
    static func flow(_ number: Int) -> String { "f\(number)" }
}
