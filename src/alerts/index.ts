/** Public surface of the alerts module: rule evaluation, routing, the delivery loop and the sinks. */

export * from '../core/alert.js';
export * from '../core/routing.js';
export * from '../core/rules/rules.js';
export * from './deliver.js';
export * from './sinks/index.js';
