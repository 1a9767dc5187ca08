// FlowStack for JavaScript: the engine (pure, no I/O) and the client over it.
export * from './engine/index.js';
export * from './client/index.js';
