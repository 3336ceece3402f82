/**
 * Public surface of the models feature: name → model resolution, the providers config schema,
 * and the offline demo model. Other features import from here rather than from the files.
 */
export { createDemoModel } from './demo-model.js';
