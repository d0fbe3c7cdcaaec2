/** Public surface of the alerts module: rule evaluation, routing, the delivery loop and the sinks. */
export * from './deliver.js';
export * from './routing.js';
export * from './rules.js';
export * from './sinks/index.js';
export * from './types.js';
