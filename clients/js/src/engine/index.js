// The FlowStack engine for JavaScript: a port of the Swift engine (clients/swift/Sources/FlowEngine
// and its JSON module), pure and without I/O, so a client holding a session's bundle computes the
// server's answer to any action, byte for byte, without a round trip. Runs in browsers and node 18.
//
// ```js
// import { SessionState, readAction } from '@flowstack/client/engine';
// const state = SessionState.fromBundle(bundleText);
// const { next } = state.applying(readAction({ type: 'back' }));
// next.document();   // the server's answer to POST /v1/sessions/{id}/actions
// ```

export { SessionState, bundleFormat } from './session.js';
export { readAction, fromPlain } from './action.js';
export { FlowError, FlowStorageError } from './errors.js';
export {
  parseJSON, writeJSON, JSONWriter, JSONParseError, jsonEquals, jsonPointer, formatNumber, quoteJSON,
  defaultLimits, storedDataLimits,
} from './json.js';
export { DefinitionProblems, rootFlowName } from './definition.js';
export { readDefinition } from './reader.js';
export { applyAction, startTree, availableActions, makeAction, isInteractionAction } from './engine.js';
export { resolveLink, followLink } from './links.js';
export { treeTop, treeScreens, visiblePath, structuralProblems, parseEntryId, defaultFlowLimits } from './tree.js';
export { readTreeStorage, writeTreeStorage } from './storage.js';
export { encodeTransition } from './document.js';
export { readSections, ListProblem } from './screenList.js';
export { diffLists, longestIncreasingRun } from './listChanges.js';
// The conformance runner (EngineRunner, for ports and tests) and the answers only it writes
// (`availableActionsDocument`, `documentWithPredictions`, `predictionsJSON`, `withPredictions`) are
// `@flowstack/client/engine/conformance`: an app does not ship them.
