// FlowStorageError: why stored bytes could not be read back as a FlowTree.

import JSON

/// Stored bytes that are not a valid tree: where (a JSON Pointer into the stored document) and
/// what is wrong. Decoding never trusts storage, so a corrupt row fails here instead of
/// crashing later.
public struct FlowStorageError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path.isEmpty ? "/" : path): \(message)" }
}
