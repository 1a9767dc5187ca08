// FlowStack's client for JavaScript: the pure machine, the session driver over fetch, stores and the event stream.
export { ActionRefused, Unreachable, batchItem, checkedAction, postedAction, refusedActions } from './client-event.js';
export { ClientMachine } from './client-machine.js';
export { EventStreamParser, openEventStream } from './event-stream.js';
/** @typedef {import('./event-stream.js').ServerSentEvent} ServerSentEvent */
export { FlowSession, SessionFailure, randomKey } from './flow-session.js';
export { FetchTransport } from './http-transport.js';
export { sameJSON } from './json.js';
export { LocalEngine, localEngine } from './local-engine.js';
export { MalformedState, NavigationState, sameState } from './navigation-state.js';
export { RetryPolicy } from './retry-policy.js';
export { SessionFlags } from './session-flags.js';
export { SessionRequests } from './session-requests.js';
export {
  KeyValueSessionStore, MemorySessionStore, SessionKey, decodeStoredSession, encodeStoredSession, keyOf, normalizeServer,
} from './session-store.js';

// The shapes an app handles, re-exported for `import('@flowstack/client').ClientEvent` and the like.
/** @typedef {import('./client-event.js').ClientEvent} ClientEvent */
/** @typedef {import('./client-event.js').Correction} Correction */
/** @typedef {import('./client-event.js').Restart} Restart */
/** @typedef {import('./client-event.js').QueuedAction} QueuedAction */
/** @typedef {import('./navigation-state.js').FlowAction} FlowAction */
/** @typedef {import('./navigation-state.js').Screen} Screen */
/** @typedef {import('./navigation-state.js').ListSection} ListSection */
/** @typedef {import('./navigation-state.js').ListRow} ListRow */
/** @typedef {import('./navigation-state.js').RowPath} RowPath */
/** @typedef {import('./navigation-state.js').ListChanges} ListChanges */
/** @typedef {import('./navigation-state.js').Transition} Transition */
/** @typedef {import('./client-machine.js').Command} Command */
/** @typedef {import('./client-machine.js').Reply} Reply */
/** @typedef {import('./flow-session.js').Configuration} Configuration */
/** @typedef {import('./session-store.js').StoredSession} StoredSession */
/** @typedef {import('./session-store.js').SessionStore} SessionStore */
/** @typedef {import('./session-store.js').KeyValueStorage} KeyValueStorage */
/** @typedef {import('./http-transport.js').FlowTransport} FlowTransport */
