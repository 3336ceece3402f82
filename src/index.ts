/**
 * The public API of eventloom: explicit named exports only.
 */
// server, config and the core runtime
export { defineConfig, loadConfig, type EventloomConfig, type CustomRoute, type ServerConfig } from './config/define-config.js';
export { startServer, type StartOptions, type EventloomServer } from './main.js';
export type { IdleCollectionOptions } from './runtime/idle-collection.js';
export type { ServerModule, ServerContext, ModuleFactory } from './contract/server-module.js';
export { startDefaultServer, defaultModules, type DefaultServerOptions } from './server-assembly.js';
export { openLevelLog, createMemoryLog, checkLogIntegrity } from './log/index.js';
export type { EventLog, LogRecord, NewRecord, AppendOptions, AppendResult, KeyValueStore, Subscription } from './log/types.js';
export { openLog, openPgLog, type OpenLogOptions } from './log/open.js';
export { DatabaseUnavailableError } from './log/pg/unavailable.js';
export { StreamFencedError, type OwnershipCapability, type SharedStoreCapability, type StorageCapability, type IntegrityCapability } from './log/capabilities.js';
export type { PgEventLog, PgLogOptions } from './log/pg/pg-log.js';
export { ActorHost, EventRejectedError, MachineVersionError, replayRecords, type ActorKind } from './runtime/actor-host.js';
export { AppError, ERROR_STATUS, type ErrorCode } from './errors.js';
export type { RouteDef, WsRouteDef, RequestContext, RouteResult, SseSink, AuthClass, AuthUser } from './contract/routes.js';
export { encodeSseFrame } from './feeds/sse-encoder.js';
export { resolveModel, createDemoModel } from './agents/models/index.js';
export type { AuthConfig } from './http/auth/index.js';
export type { CorsConfig } from './config/cors.js';
// workflows
export { createWorkflow, andThen, andWhen, andAll, andRace, andTap, andAgent, andWorkflow, andSleep, andSleepUntil, andWaitForEvent } from './workflows/builder.js';
export type {
  WorkflowDefinition,
  WorkflowConfig,
  WorkflowStep,
  StepContext,
  StepCustomEvent,
  StepFunction,
  StepType,
  StepBase,
  StepKinds,
} from './workflows/types.js';
export { registerStepKind } from './workflows/steps/registry.js';
export { SKIPPED, type StepKind, type StepRun, type DescribeChild } from './workflows/steps/kind.js';
export type { WorkflowAgentRunner, WorkflowAgentRunOptions, WorkflowAgentResult, WorkflowAgentUsage } from './contract/agent-bridge.js';
export { workflowsModule } from './workflows/module.js';
export { schedulesModule, type SchedulesModule } from './schedules/module.js';
export type { ScheduleConfig } from './schedules/config.js';
export { replayExecutionHistory, collectDefinitions, type ExecutionReplayReport, type Divergence, type DivergenceKind, type HistoryReplayOptions } from './workflows/history-replay.js';
export { locateSteps, resolveReplayPoint, type StepLocation, type ReplayPointResolution } from './workflows/replay-point.js';
// logs and observability
export { observabilityModule, type ObservabilityConfig, type ObservabilityModule } from './observability/module.js';
export { loggerFor, CORRELATION_KEYS, type LogBindings } from './kernel/logger-for.js';
export type { LogEntry } from './observability/log-entry.js';
export type { Span, SpanNode, ObsLogRecord } from './kernel/span-types.js';
// agents and tools
export { createAgent, isAgent, DEFAULT_MAX_STEPS } from './agents/define-agent.js';
export type { Agent, AgentConfig, AgentCallContext, AgentInstructions, DynamicAgentSettings, GenerationDefaults, ModelSpec } from './agents/define-agent.js';
export { isAgentMemoryHooks } from './contract/memory-hooks.js';
export type {
  AgentMemoryHooks,
  AgentMemoryConfig,
  AgentMemoryScope,
  LoadContextArgs,
  SaveMessagesArgs,
  ResolvedSemanticMemory,
  ResolvedPersistence,
} from './contract/memory-hooks.js';
export { agentsModule, type AgentsModule } from './agents/module.js';
export { resolveCallOptions, API_DEFAULTS, type ResolvedCallOptions } from './agents/call-options.js';
export { createTool, isTool, toolParametersJsonSchema, parseToolInput } from './kernel/define-tool.js';
export type { Tool, ToolConfig, ToolExecuteOptions } from './kernel/define-tool.js';
export type { AgentOperationType, AgentRunUsage } from '../machines/agent-run.machine.js';
// tool endpoints and MCP servers
export { toolsModule, type ToolsModule } from './tools/module.js';
export { ToolCatalog, type CatalogEntry } from './tools/catalog.js';
export { runToolDirect, TOOL_STARTED, TOOL_COMPLETED, TOOL_FAILED } from './tools/tool-runs.js';
export type { ToolStartedData, ToolCompletedData, ToolFailedData } from './tools/tool-runs.js';
export { mcpModule, type McpModule } from './mcp/module.js';
export type { McpServerConfig, McpStdioServerConfig, McpHttpServerConfig } from './mcp/config.js';
export type { McpStatus } from './mcp/connection.js';
// memory
export { agentMemory, AgentMemory, type AgentMemoryOptions } from './memory/agent-memory.js';
export { MemoryStore, type ListConversationsQuery, type ListMessagesQuery, type SaveEntry } from './memory/store.js';
export { MemoryService } from './memory/service.js';
export { memoryModule, MEMORY_MODULE, type MemoryModule } from './memory/module.js';
export { describeAgentMemory, type MemoryConfig, type EmbedderOption, type AgentMemoryDescription } from './memory/config.js';
export type { WorkingMemoryConfig } from './memory/working-memory.js';
export { LexicalEmbedder, AiSdkEmbedder, type Embedder } from './memory/embedder.js';
export { InProcessVectorIndex, type VectorIndex, type VectorRecord, type VectorQuery, type VectorMatch } from './memory/vector-index.js';
export type { Conversation, Message, MessagePart, StoredMessage, SearchResult, WorkingMemoryScope, WorkingMemoryFormat } from './memory/types.js';
