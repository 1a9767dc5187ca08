// FlowStackClient: the Swift package an app adds. It runs FlowStack's pure engine in the app, so a
// tap shows its next screen at once, and it talks to the server with Foundation's networking.
// It depends on FlowEngine and JSON only: building it compiles no server C library.
@_exported import FlowEngine
@_exported import JSON
