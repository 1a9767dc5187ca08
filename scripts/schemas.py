"""Checks schemas/*.schema.json with a real validator (the pinned `jsonschema`), both ways.

    $(scripts/python-tools.sh)/python scripts/schemas.py .build/debug/flowstack

- Each schema is a valid draft 2020-12 schema, its `$id` is its file name, and every property it
  declares has a `description` (what an editor's autocomplete shows).
- Every shipped file is valid: flows/*.json, flags/*.json, flows/tests/*.json, the fuzz corpus's
  good files, and every ```json example of docs/definitions.md (each names its schema in a
  `<!-- schema: FILE[#/$defs/…][; not-server: REASON] -->` line just above it; a block without
  one fails the run).
- What the server refuses for its shape, the schemas refuse too: the fuzz corpus's structural
  `bad-*` files and the cases in REFUSED below are refused by the schema and by the server.
- The other direction, for every whole-document example of the page and the good corpus files:
  a schema-valid document is accepted by the server (flows by `flowstack flows validate`, flags
  and experiments by PUT, flow tests by POST …/test), unless its marker says `not-server`.
- The reference page and the schemas are complete: every keyword the parsers accept (read from
  their Swift sources: effect names, members, operators, styles, param types, expect keys, …) is
  named on the page in backticks and declared by the schema that describes it.
- The server serves each schema byte for byte at /v1/schemas/{name}.

Prints "schemas: N passed, M failed" and exits 1 on a failure.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.server import FlowStackProcess, Tally, exit_on_sigterm  # noqa: E402
from harness.web import JSONServer  # noqa: E402

from harness.tools import use_pinned_tools  # noqa: E402

use_pinned_tools("schemas", "jsonschema")

import jsonschema  # noqa: E402
from referencing import Registry, Resource  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMAS = os.path.join(REPO, "schemas")
PAGE = os.path.join(REPO, "docs", "definitions.md")
MARKER = re.compile(r"^<!--\s*schema:\s*([^;\s]+)\s*(?:;\s*not-server:\s*(.+?))?\s*-->$")

# Fuzz corpus files the server refuses for their shape (a schema can say so). The other bad-*
# files are refused for what only the server knows: a cycle through flows (bad-cycle), a tab out
# of range (bad-tab), a flow that does not exist (bad-unknown-flow), a default that is not a
# variant (bad-default).
STRUCTURAL_BAD = {
    "definition/bad-json.json", "definition/bad-empty-initial.json", "definition/bad-unknown-effect.json",
    "flags/bad-json.json", "flags/bad-weights.json",
}
SEMANTIC_BAD = {"definition/bad-cycle.json", "definition/bad-tab.json", "definition/bad-unknown-flow.json", "flags/bad-default.json"}

ONBOARDING = {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
              "on": {"onboarding.completed": [{"from": "onboarding.first", "do": [{"bubble": {}}]}]}}


def with_rule(rule):
    return dict(ONBOARDING, on={"onboarding.completed": [rule]})


# Documents that both the schema and the server must refuse: the typos and shapes people get wrong.
REFUSED = [
    ("flow.schema.json", "unknown rule key", with_rule({"frm": "onboarding.first", "do": [{"bubble": {}}]})),
    ("flow.schema.json", "unknown effect", with_rule({"do": [{"jump": {}}]})),
    ("flow.schema.json", "effect with two keys", with_rule({"do": [{"pop": {}, "push": "x"}]})),
    ("flow.schema.json", "pop with arguments", with_rule({"do": [{"pop": {"n": 1}}]})),
    ("flow.schema.json", "unknown style", with_rule({"do": [{"present": {"flow": "modal", "style": "sheet"}}]})),
    ("flow.schema.json", "half an adaptive style", with_rule({"do": [{"present": {"flow": "modal", "style": {"compact": "fullScreen"}}}]})),
    ("flow.schema.json", "unknown param type", with_rule({"params": {"n": "int"}, "do": [{"push": "x"}]})),
    ("flow.schema.json", "two condition sources", with_rule({"when": {"flag": "a", "user": "b", "is": True}, "do": [{"push": "x"}]})),
    ("flow.schema.json", "no condition operator", with_rule({"when": {"flag": "a"}, "do": [{"push": "x"}]})),
    ("flow.schema.json", "unknown condition operator", with_rule({"when": {"flag": "a", "equals": True}, "do": [{"push": "x"}]})),
    ("flow.schema.json", "all with another key", with_rule({"when": {"all": [{"flag": "a", "is": True}], "flag": "b"}, "do": [{"push": "x"}]})),
    ("flow.schema.json", "empty do", with_rule({"do": []})),
    ("flow.schema.json", "interactive not a boolean", with_rule({"interactive": "yes", "do": [{"push": "x"}]})),
    ("flow.schema.json", "unknown kind", dict(ONBOARDING, kind="stack")),
    ("flow.schema.json", "bad flow name", dict(ONBOARDING, name="on boarding")),
    ("flow.schema.json", "reserved action", dict(ONBOARDING, on={"link": [{"do": [{"pop": {}}]}]})),
    ("flow.schema.json", "entry with screen and flow", dict(ONBOARDING, initial=[{"screen": "a", "flow": "home"}])),
    ("flow.schema.json", "missing initial", {"name": "onboarding", "kind": "stacked"}),
    ("flow.schema.json", "negative tab", dict(ONBOARDING, kind="tabbed", initial=["a", "b"], on={"x": [{"do": [{"selectTab": -1}]}]})),
    ("flow.schema.json", "bad popTo id", with_rule({"do": [{"popTo": {"id": "x3"}}]})),
    ("flow.schema.json", "hand-off with a screen", with_rule({"do": [{"push": {"handoff": "purchase", "screen": "onboarding.first"}}]})),
    ("flow.schema.json", "empty hand-off kind", dict(ONBOARDING, initial=["onboarding.first", {"handoff": ""}])),
    ("flow.schema.json", "result without into", with_rule({"do": [{"pop": {}}, {"result": {"value": 1}}]})),
    ("flow.schema.json", "result with an unknown member", with_rule({"do": [{"pop": {}}, {"result": {"into": "a", "value": 1, "feature": "x"}}]})),
    ("flow.schema.json", "result with no pop or dismiss", with_rule({"do": [{"push": "x"}, {"result": {"into": "a", "value": 1}}]})),
    ("flow.schema.json", "two results", with_rule({"do": [{"pop": {}}, {"result": {"into": "a", "value": 1}}, {"result": {"into": "b", "value": 2}}]})),
    ("flow.schema.json", "guard without else", with_rule({"guard": {"when": {"user": "loggedIn", "is": True}}, "do": [{"pop": {}}]})),
    ("flow.schema.json", "guard with an unknown member", with_rule({"guard": {"when": {"user": "loggedIn", "is": True}, "else": {"present": "modal"}, "then": []}, "do": [{"pop": {}}]})),
    ("flow.schema.json", "guard else that shows no flow", with_rule({"guard": {"when": {"user": "loggedIn", "is": True}, "else": {"push": "onboarding.second"}}, "do": [{"pop": {}}]})),
    ("flow.schema.json", "guard else that shows two flows", with_rule({"guard": {"when": {"user": "loggedIn", "is": True}, "else": [{"present": "modal"}, {"push": {"flow": "home"}}]}, "do": [{"pop": {}}]})),
    ("flow.schema.json", "guard else that dismisses", with_rule({"guard": {"when": {"user": "loggedIn", "is": True}, "else": [{"present": "modal"}, {"dismiss": {}}]}, "do": [{"pop": {}}]})),
    ("flow.schema.json", "guard else that sets a root flow", with_rule({"guard": {"when": {"user": "loggedIn", "is": True}, "else": {"setRoot": {"flow": "modal"}}}, "do": [{"pop": {}}]})),
    ("flow.schema.json", "guard else that pops", with_rule({"guard": {"when": {"user": "loggedIn", "is": True}, "else": [{"pop": {}}, {"present": "modal"}]}, "do": [{"pop": {}}]})),
    ("flow.schema.json", "guard on a bubble rule", with_rule({"guard": {"when": {"user": "loggedIn", "is": True}, "else": {"present": "modal"}}, "do": [{"bubble": {}}]})),
    ("flag.schema.json", "unknown member", {"variants": {"on": True}, "defualtVariant": "on"}),
    ("flag.schema.json", "no variants", {"variants": {}, "defaultVariant": "on"}),
    ("flag.schema.json", "weight over 1", {"variants": {"on": True}, "defaultVariant": "on", "split": [{"variant": "on", "weight": 1.5}]}),
    ("flag.schema.json", "unknown operator", {"variants": {"on": True}, "defaultVariant": "on", "rules": [{"when": {"attribute": "a", "equals": 1}, "variant": "on"}]}),
    ("flag.schema.json", "in with null", {"variants": {"on": True}, "defaultVariant": "on", "rules": [{"when": {"attribute": "a", "in": [None]}, "variant": "on"}]}),
    ("flag.schema.json", "rule without when", {"variants": {"on": True}, "defaultVariant": "on", "rules": [{"variant": "on"}]}),
    ("experiment.schema.json", "variants not an array", {"variants": {"control": 0.5}}),
    ("experiment.schema.json", "coverage over 1", {"variants": [{"key": "a"}], "coverage": 2}),
    ("experiment.schema.json", "flow version 0", {"variants": [{"key": "a", "flows": {"onboarding": 0}}]}),
    ("experiment.schema.json", "unknown variant member", {"variants": [{"key": "a", "weigth": 1}]}),
    ("experiment.schema.json", "unknown status", {"variants": [{"key": "a"}], "status": "paused"}),
    ("experiment.schema.json", "concluded without a winner", {"variants": [{"key": "a"}], "status": "concluded"}),
    ("experiment.schema.json", "a winner while running", {"variants": [{"key": "a"}], "winner": "a"}),
    ("flow-tests.schema.json", "no scenarios", {"scenarios": []}),
    ("flow-tests.schema.json", "scenario without name", {"scenarios": [{"steps": []}]}),
    ("flow-tests.schema.json", "unknown expect key", {"scenarios": [{"name": "n", "steps": [{"action": {"type": "back"}, "expect": {"topp": "x"}}]}]}),
    ("flow-tests.schema.json", "unknown transition", {"scenarios": [{"name": "n", "steps": [{"action": {"type": "back"}, "expect": {"transition": "slide"}}]}]}),
    ("flow-tests.schema.json", "unknown action key", {"scenarios": [{"name": "n", "steps": [{"action": {"type": "back", "parmas": {}}}]}]}),
    ("flow-tests.schema.json", "no steps and no expect", {"scenarios": [{"name": "n"}]}),
]


# Mistakes only the server sees (the schema accepts them): `flows validate` refuses each at its
# pointer, with the sample app around it.
SERVER_ONLY = [
    ("a from no screen can match", with_rule({"from": "checkout.reveiw", "do": [{"bubble": {}}]}), "/on/onboarding.completed/0/from"),
    ("params on a bubble rule", with_rule({"from": "onboarding.first", "params": {"n": "integer"}, "do": [{"bubble": {}}]}),
     "/on/onboarding.completed/0/params"),
    ("interactive on a bubble rule", with_rule({"from": "onboarding.first", "interactive": True, "do": [{"bubble": {}}]}),
     "/on/onboarding.completed/0/interactive"),
    ("popTo a screen the flow never stacks", with_rule({"from": "onboarding.first", "do": [{"popTo": "home.first"}]}),
     "/on/onboarding.completed/0/do/0/popTo"),
    ("a bubble no parent names", dict(ONBOARDING, on={"onboarding.done": [{"from": "onboarding.first", "do": [{"bubble": {}}]}]}),
     "/on/onboarding.done/0/do/0/bubble"),
    ("a result value whose param has no declared type",
     with_rule({"from": "onboarding.first", "do": [{"pop": {}}, {"result": {"into": "a", "value": {"$param": "a"}}}]}),
     "/on/onboarding.completed/0/do/1/result/value"),
    ("a result to a screen that is never below or behind",
     with_rule({"from": "onboarding.first", "do": [{"pop": {}}, {"result": {"into": "a", "value": 1, "to": "home.first"}}]}),
     "/on/onboarding.completed/0/do/1/result/to"),
]


def load_schemas():
    schemas = {}
    for name in sorted(os.listdir(SCHEMAS)):
        if name.endswith(".schema.json"):
            with open(os.path.join(SCHEMAS, name), encoding="utf-8") as file:
                schemas[name] = json.load(file)
    return schemas


def registry_of(schemas):
    return Registry().with_resources((name, Resource.from_contents(schema)) for name, schema in schemas.items())


def validator(schemas, registry, target):
    """A validator for `FILE` or `FILE#/pointer` (a part of a schema, for the page's fragments)."""
    name, _, pointer = target.partition("#")
    schema = {"$ref": target} if pointer else schemas[name]
    if pointer:
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "fragment-of-" + name, "$ref": name + "#" + pointer}
    return jsonschema.Draft202012Validator(schema, registry=registry, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def errors_of(validator_, document):
    return sorted(validator_.iter_errors(document), key=lambda error: list(error.absolute_path))


def describe(errors):
    return "; ".join(f"/{'/'.join(map(str, error.absolute_path))}: {error.message[:160]}" for error in errors[:3])


def undescribed_properties(schema, path="#"):
    """Paths of declared properties without a description (a $ref alone counts when the
    referenced schema has one, as editors show it)."""
    missing = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    if not isinstance(sub, dict) or "description" not in sub:
                        missing.append(f"{path}/properties/{name}")
            missing += undescribed_properties(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            missing += undescribed_properties(value, f"{path}/{index}")
    return missing


def page_examples():
    """(line, target, not_server reason or None, parsed JSON or the parse error) of every ```json
    block of the page; a block without a marker has target None."""
    with open(PAGE, encoding="utf-8") as file:
        lines = file.read().split("\n")
    examples = []
    index = 0
    while index < len(lines):
        if lines[index].strip() == "```json":
            start = index
            index += 1
            body = []
            while index < len(lines) and lines[index].strip() != "```":
                body.append(lines[index])
                index += 1
            marker = MARKER.match(lines[start - 1].strip()) if start > 0 else None
            try:
                document = json.loads("\n".join(body))
            except ValueError as error:
                document = error
            examples.append((start + 1, marker.group(1) if marker else None, marker.group(2) if marker else None, document))
        index += 1
    return examples


def swift(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as file:
        return file.read()


def swift_list(text, name):
    """The string literals of `static let NAME … = [ … ]` (or `let NAME = [ … ]`)."""
    found = re.search(r"\blet " + re.escape(name) + r"\b[^=]*=\s*\[(.*?)\]", text, re.S)
    if not found:
        raise SystemExit(f"schemas: cannot find the list {name} in the Swift sources; update scripts/schemas.py")
    return re.findall(r'"([^"\\]+)"', found.group(1))


def swift_cases(text, enum):
    """The case names (or raw values) of `enum ENUM`, up to the brace that closes it."""
    found = re.search(r"\n( *)(?:public )?(?:indirect )?enum " + re.escape(enum) + r"\b[^{]*\{", text)
    if not found:
        raise SystemExit(f"schemas: cannot find enum {enum} in the Swift sources; update scripts/schemas.py")
    end = text.index("\n" + found.group(1) + "}", found.end())
    names = []
    for line in text[found.end():end].split("\n"):
        line = line.strip()
        if not line.startswith("case ") or line.startswith("case ."):
            continue  # a switch's case, not the enum's
        for part in line[len("case "):].split(","):
            part = part.strip()
            raw = re.search(r'=\s*"([^"]+)"', part)
            names.append(raw.group(1) if raw else re.match(r"\w+", part).group(0))
    return names


def parser_keywords():
    """(what, schema target, keywords) read from the parsers: the page must name each keyword and
    the schema at target must declare it (as a property name or an enum value)."""
    reader = swift("clients/swift/Sources/FlowEngine/DefinitionReader.swift")
    links = swift("clients/swift/Sources/FlowEngine/DefinitionReader+links.swift")
    effect = swift("clients/swift/Sources/FlowEngine/FlowEffect.swift")
    condition = swift("clients/swift/Sources/FlowEngine/FlowCondition.swift")
    rule = swift("clients/swift/Sources/FlowEngine/FlowRule.swift")
    flag = swift("Sources/FeatureFlags/FlagDefinition+JSON.swift")
    experiment = swift("Sources/FeatureFlags/ExperimentDefinition+JSON.swift")
    operators = swift("Sources/FeatureFlags/AttributeOperator.swift")
    scenarios = swift("Sources/FlowScenarios/FlowScenarioSuite+parse.swift")
    scenario = swift("Sources/FlowScenarios/FlowScenario.swift")
    transition = swift("clients/swift/Sources/FlowEngine/Transition.swift")
    action = swift("clients/swift/Sources/FlowEngine/FlowAction.swift")
    link = swift("clients/swift/Sources/FlowEngine/FlowLink.swift")
    scenario_keys = re.findall(r'checkKeys\(object, \[([^\]]*)\], at: path, what: "(a scenario|a context|start|a step)"\)', scenarios)
    by_what = {what: re.findall(r'"([^"]+)"', keys) for keys, what in scenario_keys}
    if set(by_what) != {"a scenario", "a context", "start", "a step"}:
        raise SystemExit("schemas: cannot find the scenario keys in FlowScenarioSuite+parse.swift; update scripts/schemas.py")
    param_types = swift_cases(rule, "ParamType")
    link_types = re.findall(r"\.(\w+)", re.search(r"paramTypes: \[FlowRule\.ParamType\] = \[([^\]]*)\]", link).group(1))
    # The members RolloutPlan.swift accepts: its two "unknown member" checks name them.
    rollout_lists = [re.findall(r'"([^"]+)"', found)
                     for found in re.findall(r"where !\[([^\]]*)\]\.contains", swift("Sources/FlowServer/RolloutPlan.swift"))]
    if len(rollout_lists) != 2:
        raise SystemExit("schemas: cannot find the rollout members in RolloutPlan.swift; update scripts/schemas.py")
    return [
        ("flow definition members", "flow.schema.json#", swift_list(reader, "definitionKeys")),
        ("rule members", "flow.schema.json#/$defs/rule", swift_list(reader, "ruleKeys")),
        ("reserved actions", "flow.schema.json#/properties/on/propertyNames/not", swift_list(reader, "reservedActions")),
        ("effects", "flow.schema.json#/$defs/effect", swift_list(effect, "names")),
        ("presentation styles", "flow.schema.json#/$defs/styleName", swift_list(effect, "knownStyles")),
        ("param types", "flow.schema.json#/$defs/paramType", param_types),
        ("condition sources", "flow.schema.json#/$defs/test", swift_cases(condition, "Source")),
        ("condition operators", "flow.schema.json#/$defs/test", swift_list(reader, "operatorKeys")),
        ("link members", "flow.schema.json#/$defs/link", swift_list(links, "linkKeys")),
        ("link param types", "flow.schema.json#/$defs/link/properties/params/additionalProperties", link_types),
        ("flag members", "flag.schema.json#", swift_list(flag, "members")),
        ("targeting operators", "flag.schema.json#/$defs/attributeCondition", swift_cases(operators, "AttributeOperator")),
        ("experiment members", "experiment.schema.json#", swift_list(experiment, "members")),
        ("experiment variant members", "experiment.schema.json#/properties/variants/items", swift_list(experiment, "variantMembers")),
        ("scenario members", "flow-tests.schema.json#/$defs/scenario", by_what["a scenario"]),
        ("context members", "flow-tests.schema.json#/$defs/scenario/properties/context", by_what["a context"]),
        ("start members", "flow-tests.schema.json#/$defs/scenario/properties/start", by_what["start"]),
        ("step members", "flow-tests.schema.json#/$defs/scenario/properties/steps/items", by_what["a step"]),
        ("action members", "flow-tests.schema.json#/$defs/action", swift_list(action, "allowed")),
        ("expect keys", "flow-tests.schema.json#/$defs/expect", swift_cases(scenario, "Key")),
        ("transition types", "flow-tests.schema.json#/$defs/expect/properties/transition", swift_cases(transition, "Kind")),
        # The release body is the releases branch's parser; these are the contract's members.
        ("release members", "release.schema.json#", ["description", "flows", "flags", "experiments", "tests"]),
        ("rollout members", "rollout.schema.json#", rollout_lists[0]),
        ("guardrail members", "rollout.schema.json#/properties/guardrails", rollout_lists[1]),
    ]


def resolve(schemas, target):
    name, _, pointer = target.partition("#")
    node = schemas[name]
    for token in [t for t in pointer.split("/") if t]:
        node = node[int(token)] if isinstance(node, list) else node[token.replace("~1", "/").replace("~0", "~")]
    return node


def declared(node):
    """Property names and enum values a schema node declares, through allOf/anyOf/oneOf."""
    names = set()
    if isinstance(node, dict):
        names |= set(node.get("properties", {}))
        names |= {value for value in node.get("enum", []) if isinstance(value, str)}
        for key in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(key, []):
                names |= declared(sub)
    return names


def main():
    exit_on_sigterm()
    if len(sys.argv) != 2:
        raise SystemExit("usage: schemas.py PATH/TO/flowstack")
    binary = os.path.abspath(sys.argv[1])
    tally = Tally()
    schemas = load_schemas()
    registry = registry_of(schemas)

    # The schemas themselves.
    for name, schema in schemas.items():
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
            failure = None
        except jsonschema.SchemaError as error:
            failure = f"not a valid draft 2020-12 schema: {error.message}"
        tally.check(f"{name} is a schema", failure)
        tally.check(f"{name} $id", None if schema.get("$id") == name else f"$id is {schema.get('$id')!r}, not the file name")
        missing = undescribed_properties(schema)
        tally.check(f"{name} descriptions", f"properties without a description: {', '.join(missing[:8])}" if missing else None)

    # Shipped files.
    shipped = []  # (label, schema, document) for the server check too
    def check_file(label, schema_name, path):
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
        errors = errors_of(validator(schemas, registry, schema_name), document)
        tally.check(f"{label} valid", describe(errors) if errors else None)
        return document

    for folder, schema_name in (("flows", "flow.schema.json"), ("flags", "flag.schema.json"), ("flows/tests", "flow-tests.schema.json")):
        for name in sorted(os.listdir(os.path.join(REPO, folder))):
            if name.endswith(".json"):
                document = check_file(f"{folder}/{name}", schema_name, os.path.join(REPO, folder, name))
                shipped.append((f"{folder}/{name}", schema_name, document, name[:-len(".json")]))

    corpus = os.path.join(REPO, "fuzz", "corpus")
    for kind in ("definition", "flags"):
        for name in sorted(os.listdir(os.path.join(corpus, kind))):
            label = f"{kind}/{name}"
            path = os.path.join(corpus, kind, name)
            schema_name = "flow.schema.json" if kind == "definition" else (
                "experiment.schema.json" if name.startswith("experiment") or name == "bad-weights.json" else "flag.schema.json")
            if not name.startswith("bad-"):
                document = check_file(f"corpus {label}", schema_name, path)
                shipped.append((f"corpus {label}", schema_name, document, None))
                continue
            tally.check(f"corpus {label} classified", None if label in STRUCTURAL_BAD | SEMANTIC_BAD else
                        "a new bad-* file: add it to STRUCTURAL_BAD (its shape is wrong) or SEMANTIC_BAD in scripts/schemas.py")
            if label in STRUCTURAL_BAD:
                with open(path, encoding="utf-8") as file:
                    text = file.read()
                try:
                    document = json.loads(text)
                except ValueError:
                    tally.check(f"corpus {label} refused by the schema", None)  # not JSON: nothing to validate
                    continue
                errors = errors_of(validator(schemas, registry, schema_name), document)
                tally.check(f"corpus {label} refused by the schema", None if errors else "the schema accepts it")

    # The reference page's examples.
    examples = page_examples()
    tally.check("the page has examples", None if len(examples) >= 20 else f"only {len(examples)}")
    for line, target, not_server, document in examples:
        label = f"docs/definitions.md:{line}"
        if target is None:
            tally.check(label, "a ```json block needs a <!-- schema: FILE[#/$defs/…] --> line above it")
            continue
        if isinstance(document, Exception):
            tally.check(label, f"not JSON: {document}")
            continue
        name = target.partition("#")[0]
        if name not in schemas:
            tally.check(label, f"no schema {name}")
            continue
        errors = errors_of(validator(schemas, registry, target), document)
        tally.check(f"{label} valid for {target}", describe(errors) if errors else None)
        if "#" not in target and not not_server:
            shipped.append((label, name, document, document.get("name") if isinstance(document, dict) else None))

    # Refused by the schema (the server side is checked below).
    for schema_name, what, document in REFUSED:
        errors = errors_of(validator(schemas, registry, schema_name), document)
        tally.check(f"{schema_name} refuses {what}", None if errors else "the schema accepts it")

    # The page and the schemas name every keyword the parsers accept.
    with open(PAGE, encoding="utf-8") as file:
        page = file.read()
    for what, target, keywords in parser_keywords():
        tally.check(f"{what} read from the sources", None if keywords else "none found")
        unnamed = [keyword for keyword in keywords if f"`{keyword}`" not in page]
        tally.check(f"the page names every {what[:-1] if what.endswith('s') else what}",
                    f"docs/definitions.md does not mention {', '.join('`' + k + '`' for k in unnamed)}" if unnamed else None)
        node = resolve(schemas, target)
        node_names = declared(node)
        undeclared = [keyword for keyword in keywords if keyword not in node_names]
        tally.check(f"{target} declares every {what}", f"missing {', '.join(undeclared)}" if undeclared else None)

    # The server: accepts what the schemas accept, refuses what they refuse, serves them.
    with tempfile.TemporaryDirectory() as work:
        check_server(binary, work, schemas, shipped, tally)

    sys.exit(tally.report("schemas"))


def sample_option(binary, command):
    """["--with-sample"] when `flowstack flows COMMAND` takes it (offline commands that see only
    the files given), else [] (they check against the sample app anyway)."""
    run = subprocess.run([binary, "flows", command, "--help"], capture_output=True, text=True, timeout=60)
    return ["--with-sample"] if "--with-sample" in run.stdout + run.stderr else []


def check_server(binary, work, schemas, shipped, tally):
    validate = [binary, "flows", "validate"] + sample_option(binary, "validate")
    flows_test = [binary, "flows", "test"] + sample_option(binary, "test")
    flows_dir = os.path.join(work, "flows")
    os.makedirs(flows_dir)
    # flows validate: each flow document in a file named after it, checked with the sample app.
    for label, schema_name, document, flow_name in shipped:
        if schema_name != "flow.schema.json":
            continue
        path = os.path.join(flows_dir, f"{document.get('name', 'flow')}.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(document, file)
        run = subprocess.run(validate + [path], capture_output=True, text=True, timeout=60)
        tally.check(f"{label} accepted by flows validate", None if run.returncode == 0 else f"exit {run.returncode}", run.stdout.strip()[-600:])
        os.remove(path)
    for schema_name, what, document in REFUSED:
        if schema_name != "flow.schema.json":
            continue
        path = os.path.join(flows_dir, "onboarding.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(document, file)
        run = subprocess.run(validate + [path], capture_output=True, text=True, timeout=60)
        tally.check(f"flows validate refuses {what}", None if run.returncode == 1 else f"exit {run.returncode}", run.stdout.strip()[-300:])

    # Flow tests of the page pass on the sample app; a release's flows validate together and its
    # tests pass on them (`flows test --flows DIR`), as POST /v1/releases would run them.
    for label, schema_name, document, _ in shipped:
        if schema_name == "flow-tests.schema.json" and label.startswith("docs/"):
            path = os.path.join(work, "tests.json")
            with open(path, "w", encoding="utf-8") as file:
                json.dump(document, file)
            run = subprocess.run(flows_test + [path], capture_output=True, text=True, timeout=120)
            tally.check(f"{label} passes flows test", None if run.returncode == 0 else f"exit {run.returncode}", (run.stdout + run.stderr).strip()[-600:])
        if schema_name == "release.schema.json":
            release_dir = os.path.join(work, "release")
            os.makedirs(release_dir, exist_ok=True)
            paths = []
            for name, flow in document.get("flows", {}).items():
                paths.append(os.path.join(release_dir, f"{name}.json"))
                with open(paths[-1], "w", encoding="utf-8") as file:
                    json.dump(flow, file)
            run = subprocess.run(validate + paths, capture_output=True, text=True, timeout=60)
            tally.check(f"{label} flows accepted by flows validate", None if run.returncode == 0 else f"exit {run.returncode}", run.stdout.strip()[-600:])
            for index, suite in enumerate(document.get("tests", [])):
                path = os.path.join(work, f"release-tests-{index}.json")
                with open(path, "w", encoding="utf-8") as file:
                    json.dump(suite, file)
                run = subprocess.run(flows_test + ["--flows", release_dir, path], capture_output=True, text=True, timeout=120)
                tally.check(f"{label} tests/{index} pass on its flows", None if run.returncode == 0 else f"exit {run.returncode}", (run.stdout + run.stderr).strip()[-600:])
            for key, flag in document.get("flags", {}).items():
                shipped.append((f"{label} flags/{key}", "flag.schema.json", flag, None))
            for key, experiment in document.get("experiments", {}).items():
                shipped.append((f"{label} experiments/{key}", "experiment.schema.json", experiment, None))

    for what, document, pointer in SERVER_ONLY:
        errors = errors_of(validator(schemas, registry_of(schemas), "flow.schema.json"), document)
        tally.check(f"flow.schema.json accepts {what} (only the server can tell)", describe(errors) if errors else None)
        path = os.path.join(flows_dir, "onboarding.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(document, file)
        run = subprocess.run(validate + [path], capture_output=True, text=True, timeout=60)
        tally.check(f"flows validate refuses {what} at {pointer}",
                    None if run.returncode == 1 and f"onboarding.json:{pointer}:" in run.stdout else f"exit {run.returncode}", run.stdout.strip()[-300:])

    # The corpus's bad-* files are refused by the server, whether or not a schema can tell.
    corpus = os.path.join(REPO, "fuzz", "corpus")
    for label in sorted(STRUCTURAL_BAD | SEMANTIC_BAD):
        if not label.startswith("definition/"):
            continue
        run = subprocess.run(validate + [os.path.join(corpus, label)], capture_output=True, text=True, timeout=60)
        tally.check(f"flows validate refuses corpus {label}", None if run.returncode in (1, 3) else f"exit {run.returncode}", run.stdout.strip()[-300:])

    # A condition on a flag the server does not ship is a warning: printed, exit 0.
    path = os.path.join(flows_dir, "onboarding.json")
    with open(path, "w", encoding="utf-8") as file:
        json.dump(with_rule({"from": "onboarding.first", "when": {"flag": "eu-face-scn", "is": True}, "do": [{"bubble": {}}]}), file)
    run = subprocess.run(validate + [path], capture_output=True, text=True, timeout=60)
    warned = "onboarding.json:/on/onboarding.completed/0/when/flag: warning: there is no flag" in run.stdout
    tally.check("flows validate warns about an undefined flag and exits 0", None if run.returncode == 0 and warned else f"exit {run.returncode}",
                run.stdout.strip()[-300:])

    server = FlowStackProcess(binary, work)
    server.start()
    try:
        api = JSONServer(server.port, server.admin_token)
        # Experiments may pin onboarding version 2 (the corpus's do): store one.
        status, _, body = api.call("PUT", "/v1/flows/onboarding", ONBOARDING, api.admin)
        tally.check("PUT onboarding version 2", None if status == 201 else f"{status}", str(body)[:300])
        for name, schema in schemas.items():
            status, headers, body = api.call("GET", f"/v1/schemas/{name}")
            tally.check(f"GET /v1/schemas/{name}", None if status == 200 and body == schema else f"{status}", str(body)[:200])
        status, _, body = api.call("GET", "/v1/schemas")
        listed = [entry.get("name") for entry in (body or {}).get("schemas", [])]
        tally.check("GET /v1/schemas lists them", None if listed == sorted(schemas) else f"{status} {listed}")
        for index, (label, schema_name, document, _) in enumerate(shipped):
            if schema_name == "flag.schema.json":
                status, _, body = api.call("PUT", f"/v1/flags/schema-check-{index}", document, api.admin)
            elif schema_name == "experiment.schema.json":
                status, _, body = api.call("PUT", f"/v1/experiments/schema-check-{index}", document, api.admin)
            elif schema_name == "flow-tests.schema.json":
                status, _, body = api.call("POST", "/v1/flows/app/versions/1/test", document, api.admin)
            else:
                continue
            tally.check(f"{label} accepted by the server", None if status in (200, 201) else f"{status}", str(body)[:400])
        for label in sorted(STRUCTURAL_BAD | SEMANTIC_BAD):
            if not label.startswith("flags/"):
                continue
            with open(os.path.join(REPO, "fuzz", "corpus", label), "rb") as file:
                raw = file.read()
            kind = "experiments" if label == "flags/bad-weights.json" else "flags"
            request = urllib.request.Request(f"{api.base}/v1/{kind}/corpus-bad", data=raw, method="PUT",
                                             headers=dict(api.admin, **{"Content-Type": "application/json"}))
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    status = response.status
            except urllib.error.HTTPError as error:
                status = error.code
            tally.check(f"the server refuses corpus {label}", None if status in (400, 422) else f"{status}")
        for schema_name, what, document in REFUSED:
            if schema_name == "flag.schema.json":
                status, _, body = api.call("PUT", "/v1/flags/refused", document, api.admin)
            elif schema_name == "experiment.schema.json":
                status, _, body = api.call("PUT", "/v1/experiments/refused", document, api.admin)
            elif schema_name == "flow-tests.schema.json":
                status, _, body = api.call("POST", "/v1/flows/app/versions/1/test", document, api.admin)
            else:
                continue
            tally.check(f"the server refuses {what}", None if status in (400, 422) else f"{status}", str(body)[:300])
    finally:
        server.stop()


if __name__ == "__main__":
    main()
