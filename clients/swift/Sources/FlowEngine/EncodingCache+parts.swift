// EncodingCache+parts: writing one output while copying the last one's parts that encode alike, and what "alike" means.

import JSON

/// Writes one state document, copying from `last` (the last version's) each flow and
/// screen whose value encodes like the one to write, and records where the new output's parts
/// are, for the next version.
struct PartWriter {
    let last: EncodedParts
    var flows: [EncodedParts.Part] = []
    var screens: [EncodedParts.Part] = []
    /// The screens written into this output's `screens`, for `top` and the transition's ends.
    private var written: [(screen: ScreenRef, range: Range<Int>)] = []

    init(last: EncodedParts) {
        self.last = last
    }

    /// The parts of the output whose bytes are `bytes`, written from the tree whose root is `root`.
    func finish(_ bytes: [UInt8], root: FlowNode) -> EncodedParts {
        EncodedParts(bytes: bytes, root: root, flows: flows, screens: screens)
    }

    /// The last output's root, when `root` is the same flow (the counterpart of each flow is
    /// then looked for among its old counterpart's children, never in the whole old tree).
    func lastRoot(for root: FlowNode) -> FlowNode? {
        last.root.flatMap { $0.id == root.id ? $0 : nil }
    }

    /// Writes a flow as the document's `root` shows it, copied when it encodes as `old` (the
    /// flow with its id in the last output's tree) did.
    mutating func writeNode(_ node: FlowNode, isPresented: Bool, old: FlowNode?, into writer: inout JSONWriter) {
        if let old, copyFlow(node, isPresented: isPresented, old: old, into: &writer) { return }
        let mark = writer.count
        node.write(into: &writer, isPresented: isPresented) { child, childIsPresented, writer in
            writeNode(child, isPresented: childIsPresented, old: old?.counterpart(of: child), into: &writer)
        }
        record(&flows, node.id, isPresented: isPresented, Self.valueRange(from: mark, in: writer))
    }

    /// Writes `screens`' elements for `node` and what it holds and presents, in
    /// ``FlowTree/screens`` order, copying each screen that encodes as it did under `old`.
    mutating func writeScreens(of node: FlowNode, old: FlowNode?, into writer: inout JSONWriter) {
        switch node.kind {
        case .stacked:
            for entry in node.entries { writeScreens(of: entry, owner: node, old: old, into: &writer) }
        case .tabbed:
            if node.entries.indices.contains(node.selected) {
                writeScreens(of: node.entries[node.selected], owner: node, old: old, into: &writer)
            }
        }
        if let presented = node.presented { writeScreens(of: presented, old: old?.counterpart(of: presented), into: &writer) }
    }

    private mutating func writeScreens(of entry: FlowEntry, owner: FlowNode, old: FlowNode?, into writer: inout JSONWriter) {
        switch entry {
        case .screen(let screen):
            let ref = ScreenRef(screen: screen, owner: owner)
            let mark = writer.count
            if let old, Alike.utf8(old.flow, owner.flow), let oldScreen = old.screen(id: screen.id), oldScreen.encodesLike(screen),
               let part = last.screens.first(where: { $0.id == screen.id }) {
                writer.writeRawValue(last.bytes[part.range])
            } else {
                ref.write(into: &writer)
            }
            let range = Self.valueRange(from: mark, in: writer)
            record(&screens, screen.id, isPresented: false, range)
            written.append((ref, range))
        case .flow(let child):
            writeScreens(of: child, old: old?.counterpart(of: child), into: &writer)
        }
    }

    /// Writes a screen as `top` and a transition's ends show it: copied from this output's
    /// `screens` when it is there, else from the last output's, else encoded.
    mutating func writeScreen(_ screen: ScreenRef, into writer: inout JSONWriter) {
        if let again = written.first(where: { $0.screen.id == screen.id }), again.screen.encodesLike(screen) {
            writer.writeRawValue(copyOf: again.range)
            return
        }
        if let part = last.screens.first(where: { $0.id == screen.id }),
           last.root?.screenRef(id: screen.id)?.encodesLike(screen) == true {
            writer.writeRawValue(last.bytes[part.range])
            return
        }
        screen.write(into: &writer)
    }

    /// Copies the last output's bytes of `node` when it encodes as `old` did, and keeps the
    /// flows inside it reusable at their new places.
    private mutating func copyFlow(_ node: FlowNode, isPresented: Bool, old: FlowNode, into writer: inout JSONWriter) -> Bool {
        guard old.encodesLike(node),
              let index = last.flows.firstIndex(where: { $0.id == node.id && $0.isPresented == isPresented }) else { return false }
        let copied = last.flows[index].range
        writer.writeRawValue(last.bytes[copied])
        let shift = writer.count - copied.upperBound
        for (position, inner) in last.flows.enumerated()
        where position != index && inner.range.lowerBound >= copied.lowerBound && inner.range.upperBound <= copied.upperBound {
            record(&flows, inner.id, isPresented: inner.isPresented, (inner.range.lowerBound + shift)..<(inner.range.upperBound + shift))
        }
        record(&flows, node.id, isPresented: isPresented, (copied.lowerBound + shift)..<writer.count)
        return true
    }

    /// Remembers a part, unless its place does not fit the compact form (an output over 4 GiB).
    private func record(_ parts: inout [EncodedParts.Part], _ id: Int, isPresented: Bool, _ range: Range<Int>) {
        guard range.upperBound <= Int(UInt32.max) else { return }
        parts.append(EncodedParts.Part(id: id, isPresented: isPresented, range: range))
    }

    /// The bytes of the value written since `mark`: the writer puts a comma before a value that
    /// follows another, and no value starts with one.
    private static func valueRange(from mark: Int, in writer: borrowing JSONWriter) -> Range<Int> {
        let start = mark < writer.count && writer.byte(at: mark) == UInt8(ascii: ",") ? mark + 1 : mark
        return start..<writer.count
    }
}

extension FlowNode {
    /// The child flow (an entry, or the presented flow) with `child`'s id, if this node has one.
    func counterpart(of child: FlowNode) -> FlowNode? {
        if let presented = presentedStorage.first, presented.id == child.id { return presented }
        for entry in entries {
            if case .flow(let node) = entry, node.id == child.id { return node }
        }
        return nil
    }

    /// The screen entry of this node numbered `id`.
    func screen(id: Int) -> ScreenEntry? {
        for entry in entries {
            if case .screen(let screen) = entry, screen.id == id { return screen }
        }
        return nil
    }

    /// The screen numbered `id` in this node or inside it, with its owner, as `screens` shows it.
    func screenRef(id: Int) -> ScreenRef? {
        for entry in entries {
            switch entry {
            case .screen(let screen): if screen.id == id { return ScreenRef(screen: screen, owner: self) }
            case .flow(let child): if let found = child.screenRef(id: id) { return found }
            }
        }
        return presented?.screenRef(id: id)
    }
}

// MARK: - Encodes alike

// "Alike" is stricter than `==`: `JSONObject`'s `==` ignores the order of members and
// `String`'s compares canonical equivalents ("é" precomposed or not) equal, and both would write
// other bytes. Shared array storage is recognised first, so an unchanged subtree costs a few
// comparisons whatever its size.

extension FlowNode {
    /// Whether `other` is written exactly as this node is in the document:
    /// the same fields, and entries and presentation in the same storage. A node whose arrays
    /// were rebuilt counts as changed even when they hold the same (a copy missed, never a
    /// wrong one), which keeps the test a few comparisons on a changed path, however deep.
    func encodesLike(_ other: FlowNode) -> Bool {
        id == other.id && kind == other.kind && selected == other.selected
            && Alike.storage(entries, other.entries) && Alike.storage(presentedStorage, other.presentedStorage)
            && Alike.utf8(flow, other.flow) && Alike.utf8(presentationStyle, other.presentationStyle)
    }
}

extension FlowEntry {
    func encodesLike(_ other: FlowEntry) -> Bool {
        switch (self, other) {
        case let (.screen(screen), .screen(otherScreen)): screen.encodesLike(otherScreen)
        case let (.flow(node), .flow(otherNode)): node.encodesLike(otherNode)
        default: false
        }
    }
}

extension ScreenEntry {
    func encodesLike(_ other: ScreenEntry) -> Bool {
        id == other.id && isHandoff == other.isHandoff && Alike.utf8(feature, other.feature)
            && params.encodesLike(other.params)
    }
}

extension ScreenRef {
    func encodesLike(_ other: ScreenRef) -> Bool {
        id == other.id && flowId == other.flowId && isHandoff == other.isHandoff
            && Alike.utf8(feature, other.feature) && Alike.utf8(flow, other.flow) && params.encodesLike(other.params)
    }
}

extension JSONObject {
    func encodesLike(_ other: JSONObject) -> Bool {
        Alike.arrays(members, other.members) { Alike.utf8($0.key, $1.key) && $0.value.encodesLike($1.value) }
    }
}

extension JSONValue {
    func encodesLike(_ other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): true
        case let (.bool(value), .bool(otherValue)): value == otherValue
        case let (.integer(value), .integer(otherValue)): value == otherValue
        case let (.number(value), .number(otherValue)): value.bitPattern == otherValue.bitPattern
        case let (.string(value), .string(otherValue)): Alike.utf8(value, otherValue)
        case let (.array(values), .array(otherValues)): Alike.arrays(values, otherValues) { $0.encodesLike($1) }
        case let (.object(object), .object(otherObject)): object.encodesLike(otherObject)
        default: false
        }
    }
}

enum Alike {
    /// Same length and, unless they share their storage, alike element by element.
    static func arrays<Element>(_ lhs: [Element], _ rhs: [Element], _ alike: (Element, Element) -> Bool) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if storage(lhs, rhs) { return true }
        for index in lhs.indices where !alike(lhs[index], rhs[index]) { return false }
        return true
    }

    /// Whether two arrays are one: the same count in the same storage (both alive, so the
    /// storage cannot have been reused for other elements). Empty arrays are alike.
    static func storage<Element>(_ lhs: [Element], _ rhs: [Element]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.isEmpty { return true }
        return lhs.withUnsafeBufferPointer { left in rhs.withUnsafeBufferPointer { right in left.baseAddress == right.baseAddress } }
    }

    /// The same UTF-8 bytes (not `==`, which equates canonically equivalent strings).
    static func utf8(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs
        var rhs = rhs
        // Native strings give their bytes in place (small ones from the stack).
        return lhs.withUTF8 { left in rhs.withUTF8 { right in bytes(left, right) } }
    }

    /// Byte for byte, eight at a time.
    static func bytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.baseAddress == rhs.baseAddress { return true }
        let left = UnsafeRawBufferPointer(lhs)
        let right = UnsafeRawBufferPointer(rhs)
        var offset = 0
        while offset + 8 <= left.count {
            if left.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != right.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                return false
            }
            offset += 8
        }
        while offset < left.count {
            if left[offset] != right[offset] { return false }
            offset += 1
        }
        return true
    }

    static func utf8(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case let (left?, right?): utf8(left, right)
        default: false
        }
    }
}
