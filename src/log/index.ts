/** The event log module's public surface. */
export * from './types.js';
export * from './capabilities.js';
export { openLevelLog, LogDamagedError } from './level/level-log.js';
export { checkLogIntegrity, type IntegrityReport } from './integrity.js';
