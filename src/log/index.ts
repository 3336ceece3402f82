/** The event log module's public surface. */
export * from './types.js';
export { openLevelLog, LogDamagedError,    } from './level-log.js';
export { checkLogIntegrity, type IntegrityReport } from './integrity.js';
