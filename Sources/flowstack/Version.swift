// The version `flowstack --version` prints: set here, and only here, when a release is made.

enum FlowStackVersion {
    /// Bumped in the commit that makes a release (semantic versioning); a build between
    /// releases says so with its `-dev` suffix.
    static let number = "0.1.0-dev"
}
