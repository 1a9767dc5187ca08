// reader-effects: reading a rule's `do` and `guard` — push, pop, present, select a tab, and the results
// a screen returns (a port of DefinitionReader+effects).

import { abbreviatedJSON, arrayValue, integerValue, jsonPointer, objectValue, stringValue, typeName, writeJSON } from './json.js';
import { effectNames, isValidFlowName, scalarCount, needsStack, revealsScreen, showsFlow } from './definition.js';
import { parseEntryId } from './tree.js';
import { readCondition } from './reader-conditions.js';
import { checkParamReferences, readFeature, readParamsObject, readTarget } from './reader-initial.js';
import { readListEffect } from './reader-lists.js';
import { rowParams } from './action.js';

/** @typedef {import('./definition.js').DefinitionReader} DefinitionReader */
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowCondition} FlowCondition */
/** @typedef {import('./definition.js').RuleParam} RuleParam */
/** @typedef {import('./definition.js').PresentationStyle} PresentationStyle */
/** @typedef {import('./definition.js').PopTarget} PopTarget */
/** @typedef {import('./definition.js').FlowEffect} FlowEffect */
/** @typedef {import('./definition.js').FlowGuard} FlowGuard */
/** @typedef {import('./definition.js').Path} Path */

/** UIKit's modal presentation style names. */
const knownStyles = ['automatic', 'fullScreen', 'pageSheet', 'formSheet', 'currentContext', 'custom',
  'overFullScreen', 'overCurrentContext', 'popover'];

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {RuleParam[]} params
 * @returns {FlowEffect[]}
 */
export function readEffects(reader, value, path, params) {
  const elements = arrayValue(value);
  if (!elements || elements.length === 0) {
    reader.report(path, `do must be a non-empty array of effects, such as [{"push": "feature"}]; found ${abbreviatedJSON(value)}`);
    return [];
  }
  /** @type {FlowEffect[]} */
  const effects = [];
  elements.forEach((element, index) => {
    const effect = readEffect(reader, element, [...path, index], params);
    if (effect) effects.push(effect);
  });
  if (elements.length > 1) {
    elements.forEach((element, index) => {
      if (element instanceof Map && element.has('bubble')) {
        reader.report([...path, index, 'bubble'], 'bubble hands the action to the parent flow, so it must be the only effect of its rule');
      }
    });
  }
  return effects;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {RuleParam[]} params
 * @returns {FlowEffect | null}
 */
export function readEffect(reader, value, path, params) {
  const object = objectValue(value);
  if (!object || object.size !== 1) {
    const found = object ? `an object with ${object.size} keys` : typeName(value);
    reader.report(path, `an effect is an object with exactly one key naming it, such as {"push": "feature"}; found ${found}`);
    return null;
  }
  const [name, argument] = object.entries().next().value;
  const effectPath = [...path, name];
  /** @type {FlowEffect | null} */
  let effect = null;
  switch (name) {
    case 'push':
    case 'setRoot':
    case 'replaceRoot': {
      const target = readTarget(reader, argument, effectPath, name === 'replaceRoot', true);
      if (!target) return null;
      effect = { name, target };
      break;
    }
    case 'pop':
    case 'popToRoot':
    case 'dismiss':
    case 'dismissAll':
    case 'bubble': {
      const arguments_ = objectValue(argument);
      if (!arguments_ || arguments_.size !== 0) {
        reader.report(effectPath, `${name} takes no arguments; write {"${name}": {}}`);
        return null;
      }
      effect = { name };
      break;
    }
    case 'popTo': {
      const to = readPopTo(reader, argument, effectPath);
      effect = to ? { name, to } : null;
      break;
    }
    case 'present':
      effect = readPresent(reader, argument, effectPath);
      break;
    case 'selectTab':
      effect = readSelectTab(reader, argument, effectPath, params);
      break;
    case 'result':
      effect = readResult(reader, argument, effectPath);
      break;
    case 'setSections':
    case 'setRows':
    case 'insertRow':
    case 'removeRow':
    case 'moveRow':
    case 'updateRow':
      effect = readListEffect(reader, name, argument, effectPath);
      break;
    case 'setUser': {
      const values = objectValue(argument);
      if (!values || values.size === 0) {
        reader.report(effectPath, `setUser takes a non-empty object of user-state keys and values, such as {"onboarded": true}; found ${abbreviatedJSON(argument)}`);
        return null;
      }
      const before = reader.problems.length;
      for (const key of values.keys()) if (key === '') reader.report(effectPath, 'setUser keys must be non-empty');
      checkParamReferences(reader, argument, effectPath, true);
      if (reader.problems.length !== before) return null;
      effect = { name, values };
      break;
    }
    default:
      reader.report(effectPath, `unknown effect ${abbreviatedJSON(name)}; expected one of ${effectNames.join(', ')}`);
      return null;
  }
  if (!effect) return null;
  if (reader.kind === 'tabbed' && needsStack(effect)) {
    reader.report(effectPath, `${effect.name} changes a stack, but ${reader.flowName} is tabbed; use selectTab, or bubble the action to a stacked parent`);
    return null;
  }
  if (reader.kind === 'stacked' && effect.name === 'selectTab') {
    reader.report(effectPath, `selectTab needs a tabbed flow, but ${reader.flowName} is stacked; bubble the action to the tabbed flow instead`);
    return null;
  }
  return effect;
}

/**
 * `{"into": param, "value": …, "to"?: feature}`.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowEffect | null}
 */
export function readResult(reader, value, path) {
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `result takes {"into": param, "value": value, "to"?: feature}; found ${typeName(value)}`);
    return null;
  }
  const before = reader.problems.length;
  reader.checkKeys(object, ['into', 'value', 'to'], path, 'result');
  /** @type {string | null} */
  let into = null;
  const rawInto = object.get('into');
  if (rawInto !== undefined) {
    const name = stringValue(rawInto);
    if (name !== undefined && name !== '' && scalarCount(name) <= 200) into = name;
    else reader.report([...path, 'into'], `into names the param of the receiving screen that gets the value, a non-empty string; found ${abbreviatedJSON(rawInto)}`);
  } else {
    reader.report(path, 'result needs "into": the param of the receiving screen that gets the value, such as "address"');
  }
  const resultValue = object.get('value');
  if (resultValue !== undefined) checkParamReferences(reader, resultValue, [...path, 'value'], true);
  else reader.report(path, 'result needs "value": what to return, such as {"$param": "address"}');
  /** @type {string | null} */
  let to = null;
  const rawTo = object.get('to');
  if (rawTo !== undefined) to = readFeature(reader, rawTo, [...path, 'to']);
  if (into === null || resultValue === undefined || reader.problems.length !== before) return null;
  return { name: 'result', into, value: resultValue, to };
}

/**
 * A rule returns at most one result, after an effect that brings a screen back on top, and the
 * value's params have declared types.
 * @param {DefinitionReader} reader
 * @param {FlowEffect[]} effects
 * @param {JSONValue} raw
 * @param {Path} path
 * @param {boolean} declaresParams
 */
export function checkResults(reader, effects, raw, path, declaresParams) {
  const elements = arrayValue(raw);
  if (!elements) return;
  const indices = elements.map((element, index) => (element instanceof Map && element.has('result') ? index : -1)).filter((index) => index >= 0);
  if (indices.length === 0) return;
  const first = indices[0];
  for (const index of indices.slice(1)) {
    reader.report([...path, index, 'result'], `a rule returns at most one result; ${jsonPointer([...path, first])} already does`);
  }
  if (!effects.some(revealsScreen)) {
    reader.report([...path, first, 'result'], 'result returns a value to the screen that a pop, popTo, popToRoot or dismiss of the same rule brings back on top; this rule has none');
  }
  const value = [...path, first, 'result', 'value'];
  const inValue = (/** @type {Path} */ reference) => value.every((token, index) => String(reference[index]) === String(token));
  // The row params of a row rule are the engine's, typed by it.
  const supplied = (/** @type {string} */ name) => reader.ruleMatchesRows && rowParams.includes(name);
  const undeclared = reader.paramReferences.some((reference) => reference.path.length >= value.length && inValue(reference.path)
    && !supplied(reference.name));
  if (!declaresParams && undeclared) {
    reader.report(value, 'a result\'s value must have a declared type: declare the params it uses in this rule\'s params, such as "params": {"address": "object"}');
  }
}

/**
 * `{"when": condition, "else": effect or [effects]}`: the else effects show exactly one flow.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {RuleParam[]} params
 * @returns {FlowGuard | null}
 */
export function readGuard(reader, value, path, params) {
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `guard takes {"when": condition, "else": effects that show the flow satisfying it}; found ${typeName(value)}`);
    return null;
  }
  const before = reader.problems.length;
  reader.checkKeys(object, ['when', 'else'], path, 'a guard');
  /** @type {FlowCondition | null} */
  let condition = null;
  const rawWhen = object.get('when');
  if (rawWhen !== undefined) condition = readCondition(reader, rawWhen, [...path, 'when']);
  else reader.report(path, 'a guard needs "when": what must hold, such as {"user": "loggedIn", "is": true}');
  /** @type {FlowEffect[]} */
  let otherwise = [];
  const rawElse = object.get('else');
  if (rawElse !== undefined) {
    const elsePath = [...path, 'else'];
    const isList = Array.isArray(rawElse);
    const reported = reader.problems.length;
    if (isList) {
      otherwise = readEffects(reader, rawElse, elsePath, params);
    } else {
      const effect = readEffect(reader, rawElse, elsePath, params);
      otherwise = effect ? [effect] : [];
    }
    if (reader.problems.length === reported) {
      const shown = otherwise.map((effect, index) => (showsFlow(effect) ? index : -1)).filter((index) => index >= 0);
      const place = (/** @type {number} */ index) => (isList ? [...elsePath, index] : elsePath);
      if (shown.length === 0) {
        reader.report(elsePath, 'a guard\'s else shows the flow that satisfies it: a present of a flow, or a push of {"flow": name}');
      } else if (shown.length > 1) {
        reader.report(place(shown[1]), 'a guard\'s else shows one flow; the action resumes when that flow is done');
      }
      otherwise.forEach((effect, index) => {
        if (effect.name === 'present' || effect.name === 'setUser' || (effect.name === 'push' && effect.target.target === 'flow')) return;
        reader.report([...place(index), effect.name], `a guard's else cannot ${effect.name}: it shows its flow (present, or push of {"flow": name}) and may setUser, and keeps the screen the action came from under it, so the action can resume there`);
      });
    }
  } else {
    reader.report(path, 'a guard needs "else": the effects that show the flow satisfying it, such as {"present": {"flow": "login"}}');
  }
  if (condition === null || reader.problems.length !== before) return null;
  return { when: condition, otherwise };
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {PopTarget | null}
 */
export function readPopTo(reader, value, path) {
  if (typeof value === 'string') {
    const feature = readFeature(reader, value, path);
    return feature === null ? null : { feature };
  }
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `popTo takes a feature name, {"feature": name} or {"id": "e3"}; found ${typeName(value)}`);
    return null;
  }
  reader.checkKeys(object, ['feature', 'id'], path, 'popTo');
  const feature = object.get('feature');
  const id = object.get('id');
  if (feature !== undefined && id === undefined) {
    const name = readFeature(reader, feature, [...path, 'feature']);
    return name === null ? null : { feature: name };
  }
  if (feature === undefined && id !== undefined) {
    const text = stringValue(id);
    if (text !== undefined) {
      if (!parseEntryId(text)) {
        reader.report([...path, 'id'], `id must be an entry id such as "e3" or "f2"; found ${abbreviatedJSON(id)}`);
        return null;
      }
      return { id: text };
    }
    const reference = objectValue(id);
    const name = reference ? stringValue(reference.get('$param')) : undefined;
    if (!reference || reference.size !== 1 || name === undefined || name === '') {
      reader.report([...path, 'id'], `id must be an entry id such as "e3" or a reference {"$param": "name"}; found ${abbreviatedJSON(id)}`);
      return null;
    }
    reader.paramReferences.push({ name, path: [...path, 'id'] });
    return { idParam: name };
  }
  if (feature === undefined) reader.report(path, 'popTo needs "feature" or "id"');
  else reader.report(path, 'popTo takes either "feature" or "id", not both');
  return null;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowEffect | null}
 */
export function readPresent(reader, value, path) {
  if (typeof value === 'string') {
    if (!isValidFlowName(value)) {
      reader.report(path, `present takes a flow name or {"flow": name, "params"?, "style"?}; found ${abbreviatedJSON(value)}`);
      return null;
    }
    return { name: 'present', flow: value, params: new Map(), style: { fixed: 'automatic' } };
  }
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `present takes a flow name or {"flow": name, "params"?, "style"?}; found ${typeName(value)}`);
    return null;
  }
  const before = reader.problems.length;
  reader.checkKeys(object, ['flow', 'params', 'style'], path, 'present');
  /** @type {string | null} */
  let flow = null;
  const rawFlow = object.get('flow');
  if (rawFlow !== undefined) {
    const name = stringValue(rawFlow);
    if (name !== undefined && isValidFlowName(name)) flow = name;
    else reader.report([...path, 'flow'], `flow must be a flow name; found ${abbreviatedJSON(rawFlow)}`);
  } else {
    reader.report(path, 'present needs "flow": the name of the flow to present');
  }
  /** @type {JSONObject} */
  let params = new Map();
  const rawParams = object.get('params');
  if (rawParams !== undefined) params = readParamsObject(reader, rawParams, [...path, 'params'], true) ?? new Map();
  /** @type {PresentationStyle} */
  let style = { fixed: 'automatic' };
  const rawStyle = object.get('style');
  if (rawStyle !== undefined) style = readStyle(reader, rawStyle, [...path, 'style']) ?? style;
  if (flow === null || reader.problems.length !== before) return null;
  return { name: 'present', flow, params, style };
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {PresentationStyle | null}
 */
export function readStyle(reader, value, path) {
  /**
   * @param {JSONValue} candidate
   * @param {Path} at
   */
  const single = (candidate, at) => {
    const style = stringValue(candidate);
    if (style === undefined || !knownStyles.includes(style)) {
      reader.report(at, `unknown presentation style ${abbreviatedJSON(candidate)}; expected one of ${knownStyles.join(', ')}`);
      return null;
    }
    return style;
  };
  if (typeof value === 'string') {
    const style = single(value, path);
    return style === null ? null : { fixed: style };
  }
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `style is a style name or {"compact": style, "regular": style}; found ${typeName(value)}`);
    return null;
  }
  reader.checkKeys(object, ['compact', 'regular'], path, 'an adaptive style');
  const rawCompact = object.get('compact');
  const rawRegular = object.get('regular');
  if (rawCompact === undefined || rawRegular === undefined) {
    reader.report(path, 'an adaptive style needs both "compact" and "regular"');
    return null;
  }
  const compact = single(rawCompact, [...path, 'compact']);
  const regular = single(rawRegular, [...path, 'regular']);
  if (compact === null || regular === null) return null;
  return { compact, regular };
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {RuleParam[]} params
 * @returns {FlowEffect | null}
 */
export function readSelectTab(reader, value, path, params) {
  const index = integerValue(value);
  if (index !== undefined) {
    if (index < 0) {
      reader.report(path, `selectTab takes a tab index from 0; found ${index}`);
      return null;
    }
    if (reader.tabCount !== null && index >= reader.tabCount) {
      reader.report(path, `selectTab ${index} is out of range; ${reader.flowName} has tabs 0...${Math.max(reader.tabCount - 1, 0)}`);
      return null;
    }
    return { name: 'selectTab', index, param: null };
  }
  const reference = objectValue(value);
  const name = reference ? stringValue(reference.get('$param')) : undefined;
  if (!reference || reference.size !== 1 || name === undefined || name === '') {
    reader.report(path, `selectTab takes a tab index or a reference {"$param": "index"}; found ${abbreviatedJSON(value)}`);
    return null;
  }
  const declared = params.find((param) => param.name === name);
  if (declared && declared.type !== 'integer' && declared.type !== 'any') {
    reader.report([...path, '$param'], `selectTab needs an integer, but param ${writeJSON(name)} is declared ${declared.type}`);
    return null;
  }
  reader.paramReferences.push({ name, path });
  return { name: 'selectTab', index: null, param: name };
}
