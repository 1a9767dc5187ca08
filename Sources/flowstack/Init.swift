// `flowstack init DIR`: a new app's repository of flows, flow tests, flags, a README and a CI example.
import ArgumentParser
import Foundation

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a new app's repository of flow definitions, flow tests and flags.",
        discussion: """
            Writes into DIR (which must be missing or empty): flows/ (app, the root; onboarding, two screens and \
            an optional tour behind a flag; home, two tabs), flows/tests/ (flow tests that pass), flags/ (the \
            tour's flag), README.md (validate, test, diff, push) and .github/workflows/flows.yml (a CI that \
            validates and tests every change and pushes main). Then: flowstack flows validate DIR/flows and \
            flowstack flows test DIR/flows/tests --flows DIR/flows --flags DIR/flags.
            """)

    @Argument(help: "The folder to make (missing or empty).")
    var folder: String

    func run() throws {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        if manager.fileExists(atPath: folder, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw FailureMessage("cannot make \(folder): it is a file") }
            let contents = (try? manager.contentsOfDirectory(atPath: folder)) ?? []
            guard contents.isEmpty else {
                throw FailureMessage("cannot make \(folder): the folder is not empty (init writes only into a missing or empty folder)")
            }
        }
        for (path, text) in Self.files {
            let full = (folder as NSString).appendingPathComponent(path)
            do {
                try manager.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            } catch {
                throw FailureMessage("cannot make \((full as NSString).deletingLastPathComponent): \(error.localizedDescription)")
            }
            guard manager.createFile(atPath: full, contents: Data(text.utf8)) else { throw FailureMessage("cannot write \(full)") }
            print("wrote \(full)")
        }
        print("""
            next: flowstack flows validate \(folder)/flows
                  flowstack flows test \(folder)/flows/tests --flows \(folder)/flows --flags \(folder)/flags
            """)
    }

    /// Every file of the scaffold, by its path in the folder.
    static let files: [(path: String, text: String)] = [
        ("flows/app.json", #"""
        {
          "name": "app",
          "kind": "stacked",
          "description": "The root flow: home for users who completed onboarding, else onboarding.",
          "initial": [
            {"flow": "home", "when": {"user": "onboarded", "is": true}},
            {"flow": "onboarding", "when": {"user": "onboarded", "isNot": true}}
          ],
          "on": {
            "onboarding.completed": [
              {
                "description": "Trusts onboarding, which checks its own screens before it bubbles this.",
                "via": "onboarding",
                "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": true}}]
              }
            ]
          }
        }

        """#),
        ("flows/onboarding.json", #"""
        {
          "name": "onboarding",
          "kind": "stacked",
          "description": "A welcome screen, then notifications; a tour before home when the flag onboarding-tour is on.",
          "initial": ["onboarding.welcome"],
          "on": {
            "onboarding.next": [
              {"from": "onboarding.welcome", "do": [{"push": "onboarding.notifications"}]}
            ],
            "onboarding.completed": [
              {"from": "onboarding.notifications", "when": {"flag": "onboarding-tour", "is": true}, "do": [{"push": "onboarding.tour"}]},
              {"from": ["onboarding.notifications", "onboarding.tour"], "do": [{"bubble": {}}]}
            ]
          }
        }

        """#),
        ("flows/home.json", #"""
        {
          "name": "home",
          "kind": "tabbed",
          "description": "Two tabs, the first selected.",
          "initial": ["home.feed", "home.profile"],
          "selected": 0,
          "on": {
            "home.selectTab": [
              {"params": {"index": "integer"}, "do": [{"selectTab": {"$param": "index"}}]}
            ]
          }
        }

        """#),
        ("flows/tests/onboarding.json", #"""
        {"scenarios": [
          {"name": "a new user goes from welcome to home",
           "context": {"userId": "new-user"},
           "start": {"expect": {"top": "onboarding.welcome"}},
           "steps": [
             {"action": {"type": "onboarding.completed", "from": "top"}, "expect": {"error": "refused", "top": "onboarding.welcome"}},
             {"action": {"type": "onboarding.next", "from": "top"}, "expect": {"top": "onboarding.notifications", "transition": "push"}},
             {"action": {"type": "onboarding.completed", "from": "top"},
              "expect": {"screens": ["home.feed"], "transition": "replaceRoot", "handledBy": "app", "user": {"onboarded": true}}}
           ]},
          {"name": "with the tour on, the tour comes before home",
           "context": {"userId": "tourist", "flags": {"onboarding-tour": true}},
           "steps": [
             {"action": {"type": "onboarding.next"}},
             {"action": {"type": "onboarding.completed"}, "expect": {"top": "onboarding.tour", "handledBy": "onboarding"}},
             {"action": {"type": "onboarding.completed"}, "expect": {"screens": ["home.feed"], "handledBy": "app"}}
           ]},
          {"name": "the tour's flag is on for users in France",
           "context": {"userId": "amelie", "attributes": {"country": "FR"}},
           "steps": [
             {"action": {"type": "onboarding.next"}},
             {"action": {"type": "onboarding.completed"}, "expect": {"top": "onboarding.tour"}}
           ]},
          {"name": "back returns from notifications to welcome",
           "steps": [
             {"action": {"type": "onboarding.next"}},
             {"action": {"type": "back"}, "expect": {"top": "onboarding.welcome", "transition": "pop"}},
             {"action": {"type": "back"}, "expect": {"error": "refused"}}
           ]}
        ]}

        """#),
        ("flows/tests/home.json", #"""
        {"scenarios": [
          {"name": "an onboarded user starts at home and switches tabs",
           "context": {"userId": "regular", "user": {"onboarded": true}},
           "start": {"expect": {"screens": ["home.feed"]}},
           "steps": [
             {"action": {"type": "home.selectTab", "params": {"index": 1}}, "expect": {"top": "home.profile", "transition": "selectTab"}},
             {"action": {"type": "home.selectTab", "params": {"index": 2}}, "expect": {"error": "invalid-params", "top": "home.profile"}},
             {"action": {"type": "onboarding.completed"}, "expect": {"error": "refused"}}
           ]}
        ]}

        """#),
        ("flags/onboarding-tour.json", #"""
        {
          "description": "A tour of the app at the end of onboarding; on for users in France for now.",
          "variants": {"on": true, "off": false},
          "defaultVariant": "off",
          "rules": [{"when": {"attribute": "country", "in": ["FR"]}, "variant": "on"}]
        }

        """#),
        ("README.md", #"""
        # Our app's flows

        The screens of our app and how users move between them, as FlowStack flow definitions. The
        server runs them; this repository is where they are written, reviewed and tested.

        | path | what |
        | --- | --- |
        | `flows/*.json` | one flow each: `app` (the root), `onboarding`, `home` |
        | `flows/tests/*.json` | flow tests: a session, actions, and what must be on screen after each |
        | `flags/*.json` | flag definitions the flow tests evaluate (`onboarding-tour`), one per file named for its key |
        | `.github/workflows/flows.yml` | CI: validate and test every change, push `main` to the server |

        ## Working on a flow

        ```sh
        # Every definition checked on its own and against the others (JSON Pointer of each problem).
        flowstack flows validate flows
        # The flow tests, offline, with our flags.
        flowstack flows test flows/tests --flows flows --flags flags
        # A picture of the flows (also --format dot or mermaid).
        flowstack flows graph flows -o flows.svg
        ```

        ## Shipping it

        The admin token comes from the environment (`FLOWSTACK_ADMIN_TOKEN`, or the variable that
        `--token-env` names), never from the command line.

        ```sh
        export FLOWSTACK_SERVER=https://flows.example.com FLOWSTACK_ADMIN_TOKEN=…
        # What differs from the live flows and flags: new ones, changed ones (each difference's JSON Pointer).
        flowstack flows diff flows --flags flags
        # The new and changed flows and flags as one release, tested on the server with flows/tests;
        # --activate makes it live once its tests pass (a key with the publish role).
        flowstack flows push flows --flags flags --description "shorter onboarding" --activate
        # The live definitions written back into flows/ and flags/ (after a change made on the server).
        flowstack flows pull flows --flags flags
        ```

        A release goes live in one step and rolls back in one call
        (`POST /v1/releases/{id}/rollback`), flags included.

        """#),
        (".github/workflows/flows.yml", #"""
        # Validate and test the flows on every change; push main to the server as a release.
        # FLOWSTACK_IMAGE is an image built from FlowStack's Dockerfile (flowstack on the PATH).
        name: flows
        on:
          pull_request:
          push:
            branches: [main]
        jobs:
          flows:
            runs-on: ubuntu-latest
            container:
              image: ${{ vars.FLOWSTACK_IMAGE }}
              options: --entrypoint ""
            env:
              FLOWSTACK_SERVER: ${{ vars.FLOWSTACK_SERVER }}
              FLOWSTACK_ADMIN_TOKEN: ${{ secrets.FLOWSTACK_ADMIN_TOKEN }}
            steps:
              - uses: actions/checkout@v4
              - run: flowstack flows validate flows
              - run: flowstack flows test flows/tests --flows flows --flags flags
              - name: what this change would ship
                if: github.event_name == 'pull_request'
                run: flowstack flows diff flows --flags flags
              - name: ship main as one release, live once its tests pass
                if: github.ref == 'refs/heads/main'
                run: flowstack flows push flows --flags flags --activate --description "${{ github.repository }}@${{ github.sha }}"

        """#),
    ]
}
