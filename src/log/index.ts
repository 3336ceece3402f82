/** The event log module's public surface. */
export * from './types.js';
export * from './capabilities.js';
export { openLog, type OpenLogOptions } from './open.js';
export { createMemoryLog, createMemoryCluster, type MemoryLogOptions, type MemoryCluster, type MemoryNodeOptions } from './memory/memory-log.js';
export { openLevelLog, LogDamagedError, type LevelEventLog, type LevelLogOptions, type LogStats } from './level/level-log.js';
export { checkLogIntegrity, type IntegrityReport } from './integrity.js';
