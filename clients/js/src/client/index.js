// FlowStack's client for JavaScript: the pure machine, the session driver over fetch, stores and the event stream.
export { ActionRefused, Unreachable, batchItem, postedAction, refusedActions } from './client-event.js';
export { ClientMachine } from './client-machine.js';
export { EventStreamParser, openEventStream } from './event-stream.js';
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
