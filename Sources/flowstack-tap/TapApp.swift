// TapApp: the phone drawn as text, one key per action, and what the server said about each tap.
import FlowStackClient
import Foundation

@MainActor
final class TapApp {
    enum Input: Sendable {
        case key(UInt8)
        case event(ClientEvent)
        case tick
        case end
    }

    let options: Options
    let terminal: RawTerminal
    private var session: FlowSession?
    private var log: [String] = []
    private var offline = false
    private var following = false
    private var keyed: [(key: Character, action: FlowAction)] = []
    /// The keys of actions: not f, i, o or q, which are the app's own (see `help`).
    private static let keys = Array("123456789abcdeghjklmnprstuvwxyz")
    private let width = 64

    init(options: Options, terminal: RawTerminal) {
        self.options = options
        self.terminal = terminal
    }

    func run() async {
        guard let server = options.server else { return }
        terminal.write("connecting to \(server.absoluteString) as \(options.user)…\n")
        let store: any SessionStore = options.store.map { FileSessionStore(path: $0) } ?? MemorySessionStore()
        let configuration = FlowSession.Configuration(
            server: server, clientKey: options.key, userId: options.user,
            client: .init(platform: "terminal", appVersion: "1.0.0",
                          features: ["onboarding.first", "onboarding.second", "onboarding.faceScan", "home.first", "home.second", "modal",
                                     "login.form", "checkout.cart", "checkout.review", "address.list", "address.form", "address.row", "paywall.offer", "purchase"]),
            store: store, retry: RetryPolicy(attempts: 2, initialDelay: .milliseconds(200), maximumDelay: .seconds(2)),
            timeout: 5, simulatedLatency: .milliseconds(options.delay))
        let session: FlowSession
        do {
            session = try await FlowSession.start(configuration)
        } catch {
            terminal.write("could not start a session: \(error)\n")
            return
        }
        self.session = session
        if let reason = await session.restartReason { note(reason) }
        note("session \(session.sessionId) for \(options.user)" + (options.delay > 0 ? ", \(options.delay) ms added per request" : ""))
        let (inputs, continuation) = AsyncStream<Input>.makeStream()
        let keys = terminal.keys()
        Task {
            for await key in keys { continuation.yield(.key(key)) }
            continuation.yield(.end)
        }
        let events = await session.events()
        Task {
            for await event in events { continuation.yield(.event(event)) }
        }
        // Redraw now and then: the bundle arriving changes which actions are listed.
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                continuation.yield(.tick)
            }
        }
        // Frames go on the alternate screen: quitting gives the shell its screen back as it was.
        terminal.useScreen()
        await draw()
        var lastDrawn = ""
        for await input in inputs {
            switch input {
            case .end:
                await session.close()
                return
            case .tick:
                let summary = await "\(session.state.version) \(session.hasLocalEngine) \(session.pendingCount)"
                if summary == lastDrawn { continue }
                lastDrawn = summary
            case .event(let event):
                describe(event)
            case .key(let byte):
                let key = Character(UnicodeScalar(byte))
                switch key {
                case "q", "\u{04}":  // q, or Ctrl-D: raw mode reads it as a key, not as the end of input
                    await session.close()
                    return
                case "i":
                    await showIdentity(of: session)
                case "o":
                    offline.toggle()
                    await session.setOffline(offline)
                case "f":
                    following.toggle()
                    if following { await session.follow() } else { await session.stopFollowing() }
                    note(following ? "following the session's events" : "stopped following")
                default:
                    guard let action = keyed.first(where: { $0.key == key })?.action else { continue }
                    await tap(action, on: session)
                }
            }
            await draw()
        }
    }

    private func tap(_ action: FlowAction, on session: FlowSession) async {
        let local = await session.hasLocalEngine
        let started = ContinuousClock.now
        do {
            let state = try await session.send(action)
            let elapsed = ContinuousClock.now - started
            note("tap \(action.type) → \(state.top?.feature ?? "?") in \(Self.format(elapsed))" + (local ? " (local engine)" : " (prediction or answer)"))
        } catch {
            note("tap \(action.type) refused: \(error)")
        }
    }

    private func describe(_ event: ClientEvent) {
        switch event {
        case .confirmed(let state): note("confirmed v\(state.version)")
        case .corrected(let correction):
            note("corrected: \(correction.from.features.joined(separator: " › ")) ⇒ \(correction.to.features.joined(separator: " › "))"
                 + (correction.refused.isEmpty ? "" : " (not taken: \(correction.refused.map(\.type).joined(separator: ", ")))"))
        case .remote(let state): note("another device: v\(state.version) \(state.top?.feature ?? "")")
        case .offline: note("offline: taps run here and queue")
        case .online: note("online: sending the queued taps as one batch")
        case .restarted(let restart): note(restart.reason)
        }
    }

    /// Notes the session's id and its token (a new pair once a gone session was replaced): to
    /// follow the session with curl, or to give support the id of a session to end.
    private func showIdentity(of session: FlowSession) async {
        let (id, token) = await (session.sessionId, session.token)
        note("session \(id) of \(options.user)")
        note("token \(token)")
    }

    private func note(_ line: String) {
        log.append(line)
        if log.count > 12 { log.removeFirst(log.count - 12) }
    }

    private static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return String(format: "%.2f ms", milliseconds)
    }

    // MARK: drawing

    private func draw() async {
        guard let session else { return }
        let state = await session.state
        let pending = await session.pendingCount
        let local = await session.hasLocalEngine
        let isOffline = await session.isOffline
        let available = await session.availableActions
        var out = "\u{1B}[2J\u{1B}[H"
        let inner = width - 4
        out += "╭" + String(repeating: "─", count: width - 2) + "╮\n"
        func row(_ text: String) {
            let clipped = text.count > inner ? String(text.prefix(inner - 1)) + "…" : text
            out += "│ " + clipped + String(repeating: " ", count: inner - clipped.count) + " │\n"
        }
        row("v\(state.version)  " + (isOffline ? "OFFLINE" : "online") + (pending > 0 ? "  \(pending) queued" : "")
            + (local ? "  engine: local" : "  engine: server"))
        out += "├" + String(repeating: "─", count: width - 2) + "┤\n"
        for line in Self.lines(state.root, top: state.top?.id, indent: "") { row(line) }
        out += "╰" + String(repeating: "─", count: width - 2) + "╯\n"
        keyed = []
        var seen = Set<String>()
        for (index, entry) in available.enumerated() where index < Self.keys.count {
            let action = Self.action(for: entry, state: state)
            let label = action.type + (action.row.map { " row " + $0 } ?? "") + (action.params.isEmpty ? "" : " " + JSONValue.object(action.params).jsonText)
            guard seen.insert(label).inserted else { continue }
            keyed.append((Self.keys[keyed.count], action))
        }
        for (key, action) in keyed {
            out += "  \(key)  \(action.type)" + (action.row.map { " row " + $0 } ?? "")
                + (action.params.isEmpty ? "" : " " + JSONValue.object(action.params).jsonText) + "\n"
        }
        out += Self.help(offline: offline, following: following) + "\n\n"
        for line in log { out += "  " + line + "\n" }
        terminal.write(out)
    }

    /// The line under the actions: the app's own keys.
    static func help(offline: Bool, following: Bool) -> String {
        "  o  " + (offline ? "go online" : "go offline") + "    f  " + (following ? "stop following" : "follow")
            + "    i  session id and token    q  quit"
    }

    /// The tree as indented lines: a stack as its screens left to right (the top in brackets),
    /// tabs with the selected one in brackets, a presented flow below its presenter.
    static func lines(_ node: NavigationState.Node, top: String?, indent: String) -> [String] {
        var lines: [String] = []
        if node.kind == "tabbed" {
            let selected = node.selected ?? 0
            let names = node.entries.enumerated().map { index, entry -> String in
                let name: String
                switch entry {
                case .screen(let screen): name = screen.feature
                case .flow(let child): name = child.flow
                }
                return index == selected ? "[\(name)]" : name
            }
            lines.append(indent + node.flow + " tabs: " + names.joined(separator: " "))
            if node.entries.indices.contains(selected), case .flow(let child) = node.entries[selected] {
                lines += Self.lines(child, top: top, indent: indent + "  ")
            }
        } else {
            var screens: [String] = []
            for entry in node.entries {
                switch entry {
                case .screen(let screen):
                    let params = screen.params.isEmpty ? "" : " " + JSONValue.object(screen.params).jsonText
                    screens.append(screen.id == top ? "[\(screen.feature)\(params)]" : screen.feature + params)
                case .flow(let child):
                    if !screens.isEmpty { lines.append(indent + node.flow + ": " + screens.joined(separator: " › ")) }
                    screens = []
                    lines += Self.lines(child, top: top, indent: indent + "  ")
                }
            }
            if !screens.isEmpty { lines.append(indent + node.flow + ": " + screens.joined(separator: " › ")) }
        }
        if let presented = node.presented?.node {
            lines.append(indent + "▲ presented " + (presented.style ?? "") + ":")
            lines += Self.lines(presented, top: top, indent: indent + "  ")
        }
        return lines
    }

    /// The action a key posts: sample params for the params it declares (the next tab, a modal's
    /// content), and for a row tap the first row of the top screen's list of a kind it takes.
    static func action(for entry: AvailableAction, state: NavigationState) -> FlowAction {
        var params = JSONObject()
        var members: [JSONObject.Member] = []
        for param in entry.params where param.required {
            let value: JSONValue
            switch (param.name, param.type) {
            case ("index", _):
                let selected = Self.selectedTab(state.root) ?? 0
                value = .integer(selected == 0 ? 1 : 0)
            case ("content", _): value = "Hi"
            case ("progress", _): value = 0.6
            case ("velocity", _): value = 400
            case ("uri", _): value = "/home"
            case (_, .integer): value = 1
            case (_, .number): value = 0.5
            case (_, .boolean): value = true
            case (_, .object): value = [:]
            case (_, .array): value = []
            default: value = "sample"
            }
            members.append(JSONObject.Member(key: param.name, value: value))
        }
        if !members.isEmpty { params = JSONObject(uniqueMembers: members) }
        let row = entry.rowKinds.flatMap { kinds in
            Self.topSections(state.root, top: state.top?.id)?.lazy.flatMap(\.rows).first { kinds.contains($0.kind) }?.id
        }
        return FlowAction(type: entry.type, row: row, params: params, interactive: false)
    }

    /// The list of the screen on top, found in `root` (the only place the document shows it).
    static func topSections(_ node: NavigationState.Node, top: String?) -> [ListSection]? {
        for entry in node.entries {
            switch entry {
            case .screen(let screen) where screen.id == top: return screen.sections
            case .flow(let child): if let sections = topSections(child, top: top) { return sections }
            default: continue
            }
        }
        return node.presented.flatMap { topSections($0.node, top: top) }
    }

    static func selectedTab(_ node: NavigationState.Node) -> Int? {
        if let presented = node.presented?.node, let selected = selectedTab(presented) { return selected }
        if node.kind == "tabbed" { return node.selected }
        for case .flow(let child) in node.entries {
            if let selected = selectedTab(child) { return selected }
        }
        return nil
    }
}
