// effects: applies a handled action's effects, in order, to a copy of the tree, recording the
// transition (a port of EffectRun). If any effect cannot apply the whole run is dropped, so an
// action changes all or nothing.

import { FlowError } from './errors.js';
import { FlowBuilder } from './builder.js';
import { jsonPointer, writeJSON, abbreviatedJSON, getMember, idKey, integerValue, sameText, setMember, stringValue, typeName } from './json.js';
import { declaredRowKinds } from './definition.js';
import {
  activeIndex, cloneTree, dismissAllPresentations, dismissHiddenPresentations, makeScreenEntry, measure, nodeAt,
  parseEntryId, placeOfScreen, topmostScreen, treeTop, visiblePath,
} from './tree.js';
import { ListProblem, readRow, readRows, readSections, sizeProblem } from './screenList.js';
import { applyListOperation } from './listEffect.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowContext} FlowContext */
/** @typedef {import('./builder.js').FlowCatalog} FlowCatalog */
/** @typedef {import('./definition.js').FlowEffect} FlowEffect */
/** @typedef {import('./definition.js').EntryTarget} EntryTarget */
/** @typedef {import('./definition.js').PopTarget} PopTarget */
/** @typedef {import('./tree.js').FlowTree} FlowTree */
/** @typedef {import('./tree.js').FlowNode} FlowNode */
/** @typedef {import('./tree.js').FlowEntry} FlowEntry */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */
/** @typedef {import('./tree.js').ScreenRef} ScreenRef */
/** @typedef {import('./tree.js').Transition} Transition */
/** @typedef {import('./tree.js').TreeStep} TreeStep */
/** @typedef {import('./tree.js').ResultReceipt} ResultReceipt */
/** @typedef {import('./screenList.js').ListSection} ListSection */
/** @typedef {import('./screenList.js').ListRow} ListRow */
/** @typedef {import('./listEffect.js').ListEffect} ListEffect */
/** @typedef {import('./listEffect.js').ResolvedListOperation} ResolvedListOperation */

/**
 * One user-state value set by an action, for the server (and a client) to keep.
 * @typedef {{ key: string, value: JSONValue }} UserChange
 */

/** The run of one handled action's effects on a working copy of the tree. */
export class EffectRun {
  /**
   * @param {FlowTree} tree the tree before; never changed
   * @param {TreeStep[]} handlerPath
   * @param {string} handlerFlow
   * @param {FlowAction} action
   * @param {FlowCatalog} catalog
   * @param {FlowContext} context
   * @param {FlowLimits} limits
   * @param {number | null} [source] the id of the screen the action came from: the list effects'
   *   default screen
   */
  constructor(tree, handlerPath, handlerFlow, action, catalog, context, limits, source = null) {
    /** @type {FlowTree} */
    this.tree = cloneTree(tree);
    this.source = source;
    this.handlerPath = handlerPath;
    this.handlerFlow = handlerFlow;
    this.action = action;
    this.builder = new FlowBuilder(catalog, context, limits, tree.nextId);
    /** @type {UserChange[]} */
    this.userChanges = [];
    /** Set once the handling flow itself was dismissed; later effects have nothing to act on. */
    this.handlerGone = false;
    /** @type {{ kind: Transition['type'], animated: boolean, style: string | null } | null} */
    this.lastNavigation = null;
    /**
     * The `result` effect, delivered once every other effect has applied.
     * @type {Extract<FlowEffect, { name: 'result' }> | null}
     */
    this.result = null;
    /** @type {ResultReceipt | null} */
    this.receipt = null;
    /**
     * The flows that push, setRoot or present put into the tree, in order (a guard shows its flow so).
     * @type {{ id: number, name: string }[]}
     */
    this.shownFlows = [];
  }

  /**
   * The transition of the run: the last navigation effect, from the top before to the top now.
   * @param {ScreenRef} before
   * @param {boolean} interactive
   * @returns {Transition | null}
   */
  transition(before, interactive) {
    const last = this.lastNavigation;
    if (!last) return null;
    return {
      type: last.kind, from: before, to: treeTop(this.tree), animated: last.animated, style: last.style, interactive,
      result: this.receipt, lists: [],
    };
  }

  /**
   * @param {FlowEffect[]} effects
   * @throws {FlowError}
   */
  apply(effects) {
    for (const effect of effects) this.applyEffect(effect);
    this.tree.nextId = this.builder.nextId;
    dismissHiddenPresentations(this.tree.root, true);
    if (this.result) this.deliver(this.result);
    const size = measure(this.tree.root);
    const limits = this.builder.limits;
    if (size.entries > limits.maxEntries) {
      throw this.refusal(`the session would hold ${size.entries} entries; the limit is ${limits.maxEntries}`);
    }
    if (size.depth > limits.maxDepth) {
      throw this.refusal(`flows would nest ${size.depth} levels deep; the limit is ${limits.maxDepth}`);
    }
  }

  /** @param {string} reason */
  refusal(reason) {
    return FlowError.refused(this.handlerFlow, this.action.type, reason);
  }

  /**
   * @param {Transition['type']} kind
   * @param {boolean} [animated]
   * @param {string | null} [style]
   */
  record(kind, animated = true, style = null) {
    this.lastNavigation = { kind, animated, style };
  }

  /** @param {FlowEffect} effect */
  applyEffect(effect) {
    switch (effect.name) {
      case 'setUser':
        for (const [key, raw] of effect.values) {
          const value = this.resolve(raw, effect.name);
          // A user's state is kept by every store, and PostgreSQL's jsonb cannot hold U+0000: a
          // value with it (a param's, nearly always) is the action's fault, as in the Swift engine.
          if (holdsNul(key) || holdsNul(value)) {
            const message = 'user state cannot hold the character U+0000';
            const param = firstReference(raw, (name) => holdsNul(getMember(this.action.params, name)));
            throw param === null ? this.refusal(`${effect.name}: ${message}`) : this.invalid(raw, effect.name, message, param);
          }
          this.userChanges.push({ key, value });
        }
        return;
      case 'bubble':
        throw this.refusal('bubble must be the only effect of its rule');
      case 'dismissAll': {
        const style = dismissAllPresentations(this.tree.root);
        if (style !== null) this.record('dismiss', true, style);
        return;
      }
      case 'dismiss':
        this.dismiss();
        return;
      case 'result':
        if (this.result) throw this.refusal('a rule returns at most one result');
        this.result = effect;
        return;
      case 'setSections':
      case 'setRows':
      case 'insertRow':
      case 'removeRow':
      case 'moveRow':
      case 'updateRow':
        this.applyList(effect);
        return;
      default: {
        if (this.handlerGone) {
          throw this.refusal(`${effect.name} cannot apply: an earlier effect dismissed ${this.handlerFlow}`);
        }
        const handler = nodeAt(this.tree.root, this.handlerPath);
        if (!handler) {
          throw FlowError.corruptTree(`the handling flow ${this.handlerFlow} is not where the route found it`);
        }
        this.applyToHandler(effect, handler);
      }
    }
  }

  /**
   * Effects that change only the handling flow (in place: the tree is this run's copy). Each
   * checks before it changes anything, so a refusal leaves the handler as it was.
   * @param {FlowEffect} effect
   * @param {FlowNode} handler
   */
  applyToHandler(effect, handler) {
    switch (effect.name) {
      case 'push':
        this.requireStack(handler, effect.name);
        handler.entries.push(this.makeEntry(effect.target, effect.name));
        this.record('push');
        return;
      case 'pop':
        this.requireStack(handler, effect.name);
        if (handler.entries.length <= 1) throw this.refusal(`cannot pop: the stack of ${handler.flow} has a single entry`);
        handler.entries.pop();
        this.record('pop');
        return;
      case 'popTo': {
        this.requireStack(handler, effect.name);
        const index = this.popToIndex(effect.to, handler);
        handler.entries.length = index + 1;
        this.record('popTo');
        return;
      }
      case 'popToRoot':
        this.requireStack(handler, effect.name);
        if (handler.entries.length <= 1) throw this.refusal(`cannot pop to the root: the stack of ${handler.flow} has a single entry`);
        handler.entries.length = 1;
        this.record('popTo');
        return;
      case 'setRoot':
        this.requireStack(handler, effect.name);
        handler.entries = [this.makeEntry(effect.target, effect.name)];
        this.record('setRoot');
        return;
      case 'replaceRoot': {
        this.requireStack(handler, effect.name);
        const entry = this.makeEntry(effect.target, effect.name);
        handler.entries = [entry];
        handler.presented = null;
        this.record('replaceRoot', true, 'crossFade');
        return;
      }
      case 'present': {
        if (handler.presented) {
          throw this.refusal(`${handler.flow} already presents ${handler.presented.flow} (f${handler.presented.id}); dismiss it first`);
        }
        const params = this.resolveObject(effect.params, effect.name);
        const node = this.builder.makeNode(effect.flow, params);
        const style = 'fixed' in effect.style
          ? effect.style.fixed
          : (getMember(this.builder.context.traits, 'horizontalSizeClass') === 'regular' ? effect.style.regular : effect.style.compact);
        node.presentationStyle = style;
        this.shownFlows.push({ id: node.id, name: node.flow });
        handler.presented = node;
        this.record('present', true, style);
        return;
      }
      case 'selectTab':
        if (handler.kind !== 'tabbed') throw this.refusal(`selectTab needs a tabbed flow, but ${handler.flow} is stacked`);
        handler.selected = this.tabIndex(effect, handler);
        this.record('selectTab', false);
        return;
      default:
        return;
    }
  }

  /**
   * @param {FlowNode} handler
   * @param {string} name
   */
  requireStack(handler, name) {
    if (handler.kind !== 'stacked') throw this.refusal(`${name} needs a stacked flow, but ${handler.flow} is tabbed`);
  }

  /** UIKit's `dismiss`: what the handler presents, else the presented flow containing it. */
  dismiss() {
    if (this.handlerGone) throw this.refusal(`dismiss cannot apply: an earlier effect dismissed ${this.handlerFlow}`);
    const handler = nodeAt(this.tree.root, this.handlerPath);
    if (!handler) throw FlowError.corruptTree(`the handling flow ${this.handlerFlow} is not where the route found it`);
    /** @type {TreeStep[]} */
    let presenterPath;
    if (handler.presented) {
      presenterPath = this.handlerPath;
    } else {
      let depth = this.handlerPath.length;
      while (depth > 0 && this.handlerPath[depth - 1] !== 'presented') depth -= 1;
      if (depth === 0) throw this.refusal(`${this.handlerFlow} presents nothing and is not presented; there is nothing to dismiss`);
      presenterPath = this.handlerPath.slice(0, depth - 1);
      this.handlerGone = true;
    }
    const presenter = nodeAt(this.tree.root, presenterPath);
    if (!presenter) throw FlowError.corruptTree(`the presenting flow of ${this.handlerFlow} is missing`);
    const style = presenter.presented ? presenter.presented.presentationStyle : null;
    presenter.presented = null;
    this.record('dismiss', true, style);
  }

  /**
   * @param {EntryTarget} target
   * @param {string} effect
   * @returns {FlowEntry}
   */
  makeEntry(target, effect) {
    const rawSections = target.sections;
    const sections = rawSections === undefined ? null : this.resolveSections(rawSections, effect);
    const params = this.resolveObject(target.params, effect);
    if (target.target === 'screen') return this.builder.makeScreen(target.name, params, false, sections);
    if (target.target === 'handoff') return this.builder.makeScreen(target.name, params, true);
    const node = this.builder.makeNode(target.name, params);
    this.shownFlows.push({ id: node.id, name: node.flow });
    return node;
  }

  /**
   * Writes a `result` into the receiving screen's params: the topmost screen showing `to`, or
   * the screen on top once the other effects have applied.
   * @param {Extract<FlowEffect, { name: 'result' }>} result
   */
  deliver(result) {
    if (!this.lastNavigation) {
      throw this.refusal('result returns a value to the screen a pop or a dismiss brings back, but this rule moved nothing');
    }
    const value = this.resolve(result.value, 'result');
    /** @type {{ path: TreeStep[], index: number }} */
    let place;
    if (result.to !== null) {
      const found = topmostScreen(this.tree, result.to);
      if (!found) throw this.refusal(`result goes to ${result.to}, but no screen of ${result.to} is in the stack any more`);
      place = found;
    } else {
      const visible = visiblePath(this.tree);
      if (!visible) throw FlowError.corruptTree('no screen is on top');
      place = { path: visible.steps, index: activeIndex(visible.nodes[visible.nodes.length - 1]) };
    }
    const owner = nodeAt(this.tree.root, place.path);
    const screen = owner ? owner.entries[place.index] : undefined;
    if (!owner || !screen || screen.type !== 'screen') {
      throw FlowError.corruptTree('the screen receiving a result is not where it was found');
    }
    const params = new Map(screen.params);
    setMember(params, result.into, value);
    owner.entries[place.index] = makeScreenEntry(screen.id, screen.feature, params, screen.isHandoff, screen.sections);
    this.receipt = { id: screen.id, feature: screen.feature, into: result.into };
  }

  /**
   * @param {PopTarget} target
   * @param {FlowNode} handler
   */
  popToIndex(target, handler) {
    if ('feature' in target) {
      const feature = target.feature;
      /** @param {FlowEntry} entry */
      const shows = (entry) => entry.type === 'screen' && sameText(entry.feature, feature);
      for (let index = handler.entries.length - 2; index >= 0; index -= 1) {
        if (shows(handler.entries[index])) return index;
      }
      const top = handler.entries[handler.entries.length - 1];
      if (top && shows(top)) throw this.refusal(`${feature} is already on top of ${handler.flow}`);
      throw this.refusal(`no screen of ${feature} is below the top of ${handler.flow}`);
    }
    if ('id' in target) return this.indexOfEntry(target.id, handler);
    const name = target.idParam;
    const path = jsonPointer(['params', name]);
    const value = getMember(this.action.params, name);
    if (value === undefined) {
      throw FlowError.invalidParams(path, `${this.action.type} needs param ${writeJSON(name)}: the id of the entry to pop to, such as "e3"`);
    }
    const text = stringValue(value);
    if (text === undefined || !parseEntryId(text)) {
      throw FlowError.invalidParams(path, `param ${writeJSON(name)} must be an entry id such as "e3"; found ${abbreviatedJSON(value, 40)}`);
    }
    return this.indexOfEntry(text, handler);
  }

  /**
   * @param {string} text
   * @param {FlowNode} handler
   */
  indexOfEntry(text, handler) {
    const id = parseEntryId(text);
    if (!id) throw this.refusal(`${text} is not an entry id`);
    /** @param {FlowEntry} entry */
    const matches = (entry) => (entry.type === 'screen' ? !id.isFlow && entry.id === id.number : id.isFlow && entry.id === id.number);
    for (let index = handler.entries.length - 2; index >= 0; index -= 1) {
      if (matches(handler.entries[index])) return index;
    }
    const top = handler.entries[handler.entries.length - 1];
    if (top && matches(top)) throw this.refusal(`${text} is already on top of ${handler.flow}`);
    throw this.refusal(`no entry ${text} is below the top of ${handler.flow}`);
  }

  /**
   * @param {Extract<FlowEffect, { name: 'selectTab' }>} choice
   * @param {FlowNode} handler
   */
  tabIndex(choice, handler) {
    const range = () => `${handler.flow} has tabs 0...${Math.max(handler.entries.length - 1, 0)}`;
    if (choice.param === null) {
      const index = choice.index ?? 0;
      if (!(index >= 0 && index < handler.entries.length)) throw this.refusal(`tab ${index} is out of range; ${range()}`);
      return index;
    }
    const name = choice.param;
    const path = jsonPointer(['params', name]);
    const value = getMember(this.action.params, name);
    if (value === undefined) throw FlowError.invalidParams(path, `${this.action.type} needs param ${writeJSON(name)}: the tab index`);
    const index = integerValue(value);
    if (index === undefined) {
      throw FlowError.invalidParams(path, `param ${writeJSON(name)} must be an integer tab index; found ${abbreviatedJSON(value, 40)}`);
    }
    if (!(index >= 0 && index < handler.entries.length)) {
      throw FlowError.invalidParams(path, `tab ${index} is out of range; ${range()}`);
    }
    return index;
  }

  // MARK: lists

  /**
   * Applies a list effect to the screen it names (the source screen by default), once its values
   * are filled in from the params. The screen is replaced, never changed: trees share screens.
   * @param {ListEffect} effect
   */
  applyList(effect) {
    const operation = this.resolveList(effect);
    /** @type {{ path: TreeStep[], index: number }} */
    let place;
    if (effect.screen !== null) {
      const found = topmostScreen(this.tree, effect.screen);
      if (!found) throw this.refusal(`${effect.name} changes the list of ${effect.screen}, but no screen of ${effect.screen} is in the stack`);
      place = found;
    } else {
      const found = this.source === null ? null : placeOfScreen(this.tree.root, this.source);
      if (!found) {
        throw this.refusal(`${effect.name} changes the list of the screen the action came from, which an earlier effect took away; name the screen with "screen"`);
      }
      place = found;
    }
    const owner = nodeAt(this.tree.root, place.path);
    const screen = owner ? owner.entries[place.index] : undefined;
    if (!owner || !screen || screen.type !== 'screen') throw FlowError.corruptTree('the screen of a list effect is not where it was found');
    if (!screen.sections) {
      throw this.refusal(`${effect.name} changes a list, but screen e${screen.id} (${screen.feature}) has none; give its entry "sections"`);
    }
    const applied = applyListOperation(operation, screen.sections);
    if ('reason' in applied) throw this.refusal(`${effect.name} on the list of e${screen.id} (${screen.feature}): ${applied.reason}`);
    const tooLarge = sizeProblem(applied.sections);
    if (tooLarge) throw this.listTooLarge(tooLarge, effect.name);
    owner.entries[place.index] = makeScreenEntry(screen.id, screen.feature, screen.params, screen.isHandoff, applied.sections);
  }

  /**
   * @param {ListEffect} effect
   * @returns {ResolvedListOperation}
   */
  resolveList(effect) {
    const name = effect.name;
    switch (effect.name) {
      case 'setSections':
        return { name: 'setSections', sections: this.resolveSections(effect.sections, name) };
      case 'setRows': {
        const section = this.resolveId(effect.section, name, 'section');
        const rows = this.readResolved(effect.rows, name, (value) => readRows(value));
        this.requireDeclaredKinds(rows, effect.rows, [], name);
        return { name: 'setRows', section, rows };
      }
      case 'insertRow': {
        const section = this.resolveId(effect.section, name, 'section');
        const row = this.readResolved(effect.row, name, (value) => readRow(value));
        this.requireDeclaredKind(row.kind, effect.row, ['kind'], name);
        const at = effect.at === undefined ? null : this.resolveIndex(effect.at, name);
        return { name: 'insertRow', section, row, at };
      }
      case 'removeRow':
        return { name: 'removeRow', row: this.resolveId(effect.row, name, 'row') };
      case 'moveRow': {
        const row = this.resolveId(effect.row, name, 'row');
        const section = effect.section === undefined ? null : this.resolveId(effect.section, name, 'section');
        const at = effect.at === undefined ? null : this.resolveIndex(effect.at, name);
        return { name: 'moveRow', row, section, at };
      }
      default: {
        const row = this.resolveId(effect.row, name, 'row');
        const resolved = this.resolve(effect.values, name);
        if (!(resolved instanceof Map)) throw this.invalid(effect.values, name, `values must be an object; found ${typeName(resolved)}`);
        return { name: 'updateRow', row, values: resolved };
      }
    }
  }

  /**
   * A list written in an entry or a `setSections`, read once its params are filled in.
   * @param {JSONValue} raw
   * @param {string} effect
   * @returns {ListSection[]}
   */
  resolveSections(raw, effect) {
    const sections = this.readResolved(raw, effect, readSections);
    sections.forEach((section, index) => this.requireDeclaredKinds(section.rows, raw, [index, 'rows'], effect));
    return sections;
  }

  /**
   * Rows a param supplies may carry only the row kinds the catalog declares: the capability check
   * knows a definition's kinds from what it writes, so a row of any other kind would reach a
   * client that never said it can draw it. Such a row is the action's fault.
   * @param {ListRow[]} rows
   * @param {JSONValue} raw
   * @param {(string | number)[]} pointer where the rows are in `raw` filled in
   * @param {string} effect
   */
  requireDeclaredKinds(rows, raw, pointer, effect) {
    rows.forEach((row, index) => this.requireDeclaredKind(row.kind, raw, [...pointer, index, 'kind'], effect));
  }

  /**
   * Refuses `kind`, found at `pointer` of `raw` filled in, when the catalog does not declare it
   * and a param supplied it; a kind written out is the definition's own (declared by
   * construction) and is kept.
   * @param {string} kind
   * @param {JSONValue} raw
   * @param {(string | number)[]} pointer
   * @param {string} effect
   */
  requireDeclaredKind(kind, raw, pointer, effect) {
    if (declaredRowKinds(this.builder.catalog).has(idKey(kind))) return;
    const param = referenceAt(raw, pointer);
    if (param === null) return;
    throw this.invalid(raw, effect,
      `at ${jsonPointer(pointer)} of the value: row kind ${abbreviatedJSON(kind, 40)} is not declared; a row from params may carry only a kind the definitions declare (written in a list, or matched by a rule's "row")`,
      param);
  }

  /**
   * Fills in `raw`'s params and reads it; a value a param made malformed is the action's fault
   * (invalid params, at the param holding the problem, else the first param it uses), a literal
   * one the definition's.
   * @template T
   * @param {JSONValue} raw
   * @param {string} effect
   * @param {(value: JSONValue) => T} read
   * @returns {T}
   */
  readResolved(raw, effect, read) {
    const value = this.resolve(raw, effect);
    try {
      return read(value);
    } catch (problem) {
      if (!(problem instanceof ListProblem)) throw problem;
      if (problem.tooLarge) throw this.listTooLarge(problem, effect);
      const pointer = jsonPointer(problem.pointer);
      throw this.invalid(raw, effect, `${pointer === '' ? '' : `at ${pointer} of the value: `}${problem.detail}`,
        referenceAt(raw, problem.pointer));
    }
  }

  /**
   * The refusal of an effect that would leave a list over a size cap (the run is dropped).
   * @param {ListProblem} problem
   * @param {string} effect
   */
  listTooLarge(problem, effect) {
    const pointer = jsonPointer(problem.pointer);
    return FlowError.listTooLarge(this.handlerFlow, this.action.type,
      `${effect}: ${pointer === '' ? '' : `at ${pointer} of the list: `}${problem.detail}`);
  }

  /**
   * @param {JSONValue} raw
   * @param {string} effect
   * @param {string} what
   */
  resolveId(raw, effect, what) {
    const value = this.resolve(raw, effect);
    const text = stringValue(value);
    if (text === undefined || text === '' || Array.from(text).length > 200) {
      throw this.invalid(raw, effect, `a ${what} id must be a string of 1 to 200 characters; found ${abbreviatedJSON(value, 40)}`);
    }
    return text;
  }

  /**
   * @param {JSONValue} raw
   * @param {string} effect
   */
  resolveIndex(raw, effect) {
    const value = this.resolve(raw, effect);
    const index = integerValue(value);
    if (index === undefined || index < 0) throw this.invalid(raw, effect, `at must be an index from 0; found ${abbreviatedJSON(value, 40)}`);
    return index;
  }

  /**
   * `invalid-params` at `param`, else the first param `raw` uses, or a refusal when it uses none.
   * @param {JSONValue} raw
   * @param {string} effect
   * @param {string} message
   * @param {string | null} [param]
   */
  invalid(raw, effect, message, param = null) {
    const name = param ?? firstReference(raw);
    if (name === null) return this.refusal(`${effect}: ${message}`);
    return FlowError.invalidParams(jsonPointer(['params', name]), `${this.action.type}'s ${effect} effect: ${message}`);
  }

  // MARK: param references

  /**
   * @param {JSONObject} params
   * @param {string} effect
   * @returns {JSONObject}
   */
  resolveObject(params, effect) {
    if (!containsReference(params)) return params;
    const resolved = this.resolve(params, effect);
    return resolved instanceof Map ? resolved : params;
  }

  /**
   * Replaces each `{"$param": name}` with the action's param `name`.
   * @param {JSONValue} value
   * @param {string} effect
   * @returns {JSONValue}
   */
  resolve(value, effect) {
    if (value instanceof Map) {
      const name = value.size === 1 ? stringValue(getMember(value, '$param')) : undefined;
      if (name !== undefined) {
        const param = getMember(this.action.params, name);
        if (param === undefined) {
          throw FlowError.invalidParams(jsonPointer(['params', name]),
            `${this.action.type} needs param ${writeJSON(name)} (used by its ${effect} effect)`);
        }
        return param;
      }
      if (!containsReference(value)) return value;
      /** @type {JSONObject} */
      const resolved = new Map();
      for (const [key, member] of value) resolved.set(key, this.resolve(member, effect));
      return resolved;
    }
    if (Array.isArray(value)) {
      if (!containsReference(value)) return value;
      return value.map((element) => this.resolve(element, effect));
    }
    return value;
  }
}

/**
 * The param whose value holds `pointer` of `raw` filled in: the reference met walking `raw` along
 * the pointer; null when the pointer stays in what the definition wrote.
 * @param {JSONValue} raw
 * @param {(string | number)[]} pointer
 * @returns {string | null}
 */
function referenceAt(raw, pointer) {
  let node = raw;
  for (const token of pointer) {
    const name = referenceName(node);
    if (name !== null) return name;
    if (node instanceof Map) {
      const member = getMember(node, String(token));
      if (member === undefined) return null;
      node = member;
    } else if (Array.isArray(node)) {
      const text = String(token);
      if (!/^\d+$/.test(text) || Number(text) >= node.length) return null;
      node = node[Number(text)];
    } else {
      return null;
    }
  }
  return referenceName(node);
}

/**
 * @param {JSONValue} value
 * @returns {string | null}
 */
function referenceName(value) {
  if (!(value instanceof Map) || value.size !== 1) return null;
  return stringValue(getMember(value, '$param')) ?? null;
}

/**
 * Whether `value` (a string), a string in it, or a key of one of its objects holds U+0000.
 * @param {JSONValue | undefined} value
 * @returns {boolean}
 */
function holdsNul(value) {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value instanceof Map) {
    for (const [key, member] of value) if (key.includes('\u0000') || holdsNul(member)) return true;
    return false;
  }
  if (Array.isArray(value)) return value.some(holdsNul);
  return false;
}

/**
 * The name of the first `{"$param": name}` in `value` that `accept` takes (any, unless told),
 * members and elements in order.
 * @param {JSONValue} value
 * @param {(name: string) => boolean} [accept]
 * @returns {string | null}
 */
function firstReference(value, accept = () => true) {
  if (value instanceof Map) {
    const name = value.size === 1 ? stringValue(getMember(value, '$param')) : undefined;
    if (name !== undefined) return accept(name) ? name : null;
    for (const member of value.values()) {
      const found = firstReference(member, accept);
      if (found !== null) return found;
    }
    return null;
  }
  if (Array.isArray(value)) {
    for (const element of value) {
      const found = firstReference(element, accept);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * @param {JSONValue} value
 * @returns {boolean}
 */
export function containsReference(value) {
  if (value instanceof Map) {
    if (value.size === 1 && typeof getMember(value, '$param') === 'string') return true;
    for (const member of value.values()) if (containsReference(member)) return true;
    return false;
  }
  if (Array.isArray(value)) return value.some(containsReference);
  return false;
}
