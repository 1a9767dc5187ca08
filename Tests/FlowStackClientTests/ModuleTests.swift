// The client module builds on the engine alone.
import FlowStackClient
import Testing

struct ModuleTests {
    /// The client reads the bundle format the server writes.
    @Test func readsTheServersBundleFormat() {
        #expect(SessionBundle.format == 1)
    }
}
