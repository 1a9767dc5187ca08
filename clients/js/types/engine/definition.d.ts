/**
 * The row kinds this definition can put in a list: those of the rows written in its entries'
 * `sections` and in its list effects, and those its rules match (`row`). Rows a param supplies
 * whole are the client's own and cannot be known here.
 * @param {FlowDefinition} definition
 * @returns {string[]}
 */
export function ownRowKinds(definition: FlowDefinition): string[];
/**
 * The row kinds a catalog's definitions declare, as `idKey`s (canonically equivalent spellings
 * are one kind): the union of their `ownRowKinds`. A row a param supplies whole may carry only one
 * of these, so a client that renders the catalog's kinds can draw it. Computed once per catalog (a
 * catalog is not changed once a session runs on it), so an action consults it without walking the
 * definitions.
 * @param {Map<string, FlowDefinition>} catalog
 * @returns {Set<string>}
 */
export function declaredRowKinds(catalog: Map<string, FlowDefinition>): Set<string>;
/**
 * A JSON Pointer's tokens, outermost first.
 * @typedef {(string | number)[]} Path
 */
/**
 * Whether `value` has the declared type: `integer` accepts integral numbers such as `1.0`,
 * `number` accepts integers.
 * @param {RuleParam['type']} type
 * @param {JSONValue} value
 */
export function paramAccepts(type: RuleParam['type'], value: JSONValue): boolean;
/**
 * Flow names appear in URLs, so they stay URL-safe: 1 to 100 letters, digits, '.', '_' or '-'.
 * @param {string} name
 */
export function isValidFlowName(name: string): boolean;
/**
 * A value written as one name or a non-empty array of names (`via`, a rule's `row`): its elements
 * with their paths, each still to be checked as a name; `expected` is reported when it is neither.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string} expected
 * @returns {[JSONValue, Path][] | null}
 */
export function readNameOrNames(reader: DefinitionReader, value: JSONValue, path: Path, expected: string): [JSONValue, Path][] | null;
/**
 * Whether a rule only hands the action to its parent.
 * @param {FlowRule} rule
 */
export function ruleBubbles(rule: FlowRule): boolean;
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowCondition} FlowCondition */
/** @typedef {import('./condition.js').ConditionTest} ConditionTest */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./linkPattern.js').LinkPattern} LinkPattern */
/** @typedef {import('./listEffect.js').ListEffect} ListEffect */
/**
 * What goes into a flow: a screen of a feature, a child flow built from its definition, or a
 * hand-off (a native step the app runs, shown like a screen whose feature is its kind). Params
 * may hold `{"$param": name}` references when the target comes from an effect; so may a list
 * screen's `sections` (`[{"id", "title"?, "indexTitle"?, "rows"}]` as written, or `{"$param": name}`).
 * @typedef {{ target: 'screen' | 'flow' | 'handoff', name: string, params: JSONObject, sections?: JSONValue }} EntryTarget
 */
/**
 * A declared param: `"index": "integer"`, or `"note": "string?"` when optional.
 * @typedef {object} RuleParam
 * @property {string} name
 * @property {'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'any'} type
 * @property {boolean} required
 */
/**
 * The modal presentation style: fixed, or chosen by the `horizontalSizeClass` trait.
 * @typedef {{ fixed: string } | { compact: string, regular: string }} PresentationStyle
 */
/**
 * Which entry `popTo` returns to: the topmost screen of a feature below the top, the entry with
 * an id, or the entry whose id is an action param.
 * @typedef {{ feature: string } | { id: string } | { idParam: string }} PopTarget
 */
/**
 * One effect of a handled action, applied to the flow that handled it.
 * @typedef {{ name: 'push' | 'setRoot' | 'replaceRoot', target: EntryTarget }
 *   | { name: 'pop' | 'popToRoot' | 'dismiss' | 'dismissAll' | 'bubble' }
 *   | { name: 'popTo', to: PopTarget }
 *   | { name: 'present', flow: string, params: JSONObject, style: PresentationStyle }
 *   | { name: 'selectTab', index: number | null, param: string | null }
 *   | { name: 'setUser', values: JSONObject }
 *   | { name: 'result', into: string, value: JSONValue, to: string | null }
 *   | ListEffect} FlowEffect
 */
/**
 * A rule's guard: when `when` fails, `otherwise` applies (it shows the guard's flow) and the
 * action waits until that flow is done.
 * @typedef {{ when: FlowCondition, otherwise: FlowEffect[] }} FlowGuard
 */
/**
 * One rule of a flow for an action type, tried in order with its siblings.
 * @typedef {object} FlowRule
 * @property {string[] | null} from the features the source screen may show; null: any
 * @property {string[] | null} row the kinds of the tapped row (`row` of the action) the rule
 *   matches; null matches any action, row tap or not
 * @property {string[] | null} via the child flows the action may come up through; null: any
 * @property {FlowCondition | null} when
 * @property {boolean} interactive
 * @property {RuleParam[]} params
 * @property {FlowEffect[]} effects never empty
 * @property {string | null} summary
 * @property {FlowGuard | null} guarded
 */
/**
 * A deep link of the root flow.
 * @typedef {object} FlowLink
 * @property {LinkPattern} pattern
 * @property {RuleParam[]} params placeholder types; an undeclared placeholder is a string
 * @property {FlowCondition | null} when
 * @property {FlowAction[]} actions params may hold `{"$link": name}`
 * @property {string | null} summary
 */
/**
 * A flow controller described as data.
 * @typedef {object} FlowDefinition
 * @property {string} name
 * @property {'stacked' | 'tabbed'} kind
 * @property {{ target: EntryTarget, when: FlowCondition | null }[]} initial
 * @property {number} selected
 * @property {{ action: string, rules: FlowRule[] }[]} handlers in written order
 * @property {Map<string, FlowRule[]>} rulesByAction the same, by action type
 * @property {string | null} summary
 * @property {FlowLink[]} links
 */
/**
 * One problem in a definition: a JSON Pointer and what is wrong.
 * @typedef {{ path: string, message: string }} DefinitionProblem
 */
/** Every problem found in a definition. */
export class DefinitionProblems extends Error {
    /** @param {DefinitionProblem[]} problems */
    constructor(problems: DefinitionProblem[]);
    problems: DefinitionProblem[];
}
/** The flow every session starts from. */
export const rootFlowName: "app";
/** Actions the engine understands itself, which no flow may name. */
export const reservedActions: string[];
/** Every effect name, in the order messages list them. */
export const effectNames: string[];
export function scalarCount(text: string): number;
export function onlyBubbles(effects: FlowEffect[]): boolean;
export function needsStack(effect: FlowEffect): boolean;
export function revealsScreen(effect: FlowEffect): boolean;
export function showsFlow(effect: FlowEffect): boolean;
/**
 * Reads a definition document, recording every problem with its path and carrying on, so one
 * upload reports everything wrong at once.
 */
export class DefinitionReader {
    /** @type {DefinitionProblem[]} */
    problems: DefinitionProblem[];
    /** @type {'stacked' | 'tabbed' | null} */
    kind: 'stacked' | 'tabbed' | null;
    flowName: string;
    /** @type {string | null} */
    flowNameValue: string | null;
    /** @type {number | null} */
    tabCount: number | null;
    /**
     * Param references of the rule being read, checked against its declared params.
     * @type {{ name: string, path: Path }[]}
     */
    paramReferences: {
        name: string;
        path: Path;
    }[];
    /**
     * Whether the rule being read matches row taps (`row`), whose `row.id`, `row.kind` and
     * `row.values` params the engine supplies, so references to them need no declaration.
     */
    ruleMatchesRows: boolean;
    /**
     * @param {Path} path
     * @param {string} message
     */
    report(path: Path, message: string): void;
    /**
     * Unknown keys are reported because a typo would otherwise silently change what a rule means.
     * @param {JSONObject} object
     * @param {string[]} allowed
     * @param {Path} path
     * @param {string} what
     */
    checkKeys(object: import("./json.js").JSONObject, allowed: string[], path: Path, what: string): void;
}
/**
 * A JSON Pointer's tokens, outermost first.
 */
export type Path = (string | number)[];
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowCondition = import('./condition.js').FlowCondition;
export type ConditionTest = import('./condition.js').ConditionTest;
export type FlowAction = import('./tree.js').FlowAction;
export type LinkPattern = import('./linkPattern.js').LinkPattern;
export type ListEffect = import('./listEffect.js').ListEffect;
/**
 * What goes into a flow: a screen of a feature, a child flow built from its definition, or a
 * hand-off (a native step the app runs, shown like a screen whose feature is its kind). Params
 * may hold `{"$param": name}` references when the target comes from an effect; so may a list
 * screen's `sections` (`[{"id", "title"?, "indexTitle"?, "rows"}]` as written, or `{"$param": name}`).
 */
export type EntryTarget = {
    target: 'screen' | 'flow' | 'handoff';
    name: string;
    params: Map<string, import("./json.js").JSONValue>;
    sections?: JSONValue;
};
/**
 * A declared param: `"index": "integer"`, or `"note": "string?"` when optional.
 */
export type RuleParam = {
    name: string;
    type: 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'any';
    required: boolean;
};
/**
 * The modal presentation style: fixed, or chosen by the `horizontalSizeClass` trait.
 */
export type PresentationStyle = {
    fixed: string;
} | {
    compact: string;
    regular: string;
};
/**
 * Which entry `popTo` returns to: the topmost screen of a feature below the top, the entry with
 * an id, or the entry whose id is an action param.
 */
export type PopTarget = {
    feature: string;
} | {
    id: string;
} | {
    idParam: string;
};
/**
 * One effect of a handled action, applied to the flow that handled it.
 */
export type FlowEffect = {
    name: 'push' | 'setRoot' | 'replaceRoot';
    target: EntryTarget;
} | {
    name: 'pop' | 'popToRoot' | 'dismiss' | 'dismissAll' | 'bubble';
} | {
    name: 'popTo';
    to: PopTarget;
} | {
    name: 'present';
    flow: string;
    params: Map<string, import("./json.js").JSONValue>;
    style: PresentationStyle;
} | {
    name: 'selectTab';
    index: number | null;
    param: string | null;
} | {
    name: 'setUser';
    values: Map<string, import("./json.js").JSONValue>;
} | {
    name: 'result';
    into: string;
    value: JSONValue;
    to: string | null;
} | ListEffect;
/**
 * A rule's guard: when `when` fails, `otherwise` applies (it shows the guard's flow) and the
 * action waits until that flow is done.
 */
export type FlowGuard = {
    when: FlowCondition;
    otherwise: FlowEffect[];
};
/**
 * One rule of a flow for an action type, tried in order with its siblings.
 */
export type FlowRule = {
    /**
     * the features the source screen may show; null: any
     */
    from: string[] | null;
    /**
     * the kinds of the tapped row (`row` of the action) the rule
     * matches; null matches any action, row tap or not
     */
    row: string[] | null;
    /**
     * the child flows the action may come up through; null: any
     */
    via: string[] | null;
    when: FlowCondition | null;
    interactive: boolean;
    params: RuleParam[];
    /**
     * never empty
     */
    effects: FlowEffect[];
    summary: string | null;
    guarded: FlowGuard | null;
};
/**
 * A deep link of the root flow.
 */
export type FlowLink = {
    pattern: LinkPattern;
    /**
     * placeholder types; an undeclared placeholder is a string
     */
    params: RuleParam[];
    when: FlowCondition | null;
    /**
     * params may hold `{"$link": name}`
     */
    actions: FlowAction[];
    summary: string | null;
};
/**
 * A flow controller described as data.
 */
export type FlowDefinition = {
    name: string;
    kind: 'stacked' | 'tabbed';
    initial: {
        target: EntryTarget;
        when: FlowCondition | null;
    }[];
    selected: number;
    /**
     * in written order
     */
    handlers: {
        action: string;
        rules: FlowRule[];
    }[];
    /**
     * the same, by action type
     */
    rulesByAction: Map<string, FlowRule[]>;
    summary: string | null;
    links: FlowLink[];
};
/**
 * One problem in a definition: a JSON Pointer and what is wrong.
 */
export type DefinitionProblem = {
    path: string;
    message: string;
};
