/**
 * The public API of eventloom: explicit named exports only, what a user's config, tools, agents and
 * workflows need. Internals are imported from their own files (the tests do so). docs/public-surface.txt
 * lists these names; a test fails while it is stale (`npm run surface`).
 */
// config and starting a server
export { defineConfig, type EventloomConfig, type CustomRoute, type ServerConfig } from './config/define-config.js';
export { startServer, type StartOptions, type EventloomServer } from './main.js';
export { startDefaultServer, defaultModules, type DefaultServerOptions } from './server-assembly.js';
export type { IdleCollectionOptions } from './runtime/idle-collection.js';
export type { ServerModule, ServerContext, ModuleFactory } from './contract/server-module.js';
export type { AuthConfig } from './http/auth/index.js';
export type { CorsConfig } from './config/cors.js';
export type { RetentionConfig, RetentionDuration, RetentionPolicyConfig } from './config/retention.js';
export type { ObservabilityConfig } from './observability/module.js';
export type { McpServerConfig, McpStdioServerConfig, McpHttpServerConfig } from './mcp/config.js';
// errors
export { AppError, ERROR_STATUS, type ErrorCode } from './errors.js';
// custom routes
export type { RouteDef, WsRouteDef, RequestContext, RouteResult, StreamFollow, SseSink, AuthClass, AuthUser } from './contract/routes.js';
// workflows
export { createWorkflow, andThen, andWhen, andAll, andRace, andTap, andAgent, andWorkflow, andSleep, andSleepUntil, andWaitForEvent } from './workflows/builder.js';
export type { WorkflowDefinition, WorkflowConfig, WorkflowStep, StepContext, StepCustomEvent, StepFunction, StepType, StepBase, StepKinds } from './workflows/types.js';
export { registerStepKind } from './workflows/steps/registry.js';
export { SKIPPED, type StepKind, type StepRun, type DescribeChild } from './workflows/steps/kind.js';
export { NonRetryableError, type RetryPolicy, type RetryBackoff } from './workflows/retry-policy.js';
export type { WorkflowAgentResult, WorkflowAgentUsage } from './contract/agent-bridge.js';
// schedules
export type { ScheduleConfig } from './schedules/config.js';
// agents, models and tools
export { createAgent } from './agents/define-agent.js';
export type { Agent, AgentConfig, AgentCallContext, AgentInstructions, DynamicAgentSettings, GenerationDefaults, ModelSpec } from './agents/define-agent.js';
export type { AgentRunUsage } from '../machines/agent-run.machine.js';
export { createDemoModel } from './agents/models/index.js';
export { createTool } from './kernel/define-tool.js';
export type { Tool, ToolConfig, ToolExecuteOptions } from './kernel/define-tool.js';
// memory
export { agentMemory, AgentMemory, type AgentMemoryOptions } from './memory/agent-memory.js';
export type { AgentMemoryHooks, AgentMemoryConfig, AgentMemoryScope, LoadContextArgs, SaveMessagesArgs } from './contract/memory-hooks.js';
export type { MemoryConfig, EmbedderOption } from './memory/config.js';
export type { WorkingMemoryConfig } from './memory/working-memory.js';
export type { Embedder } from './memory/embedder.js';
export type { Conversation, Message, MessagePart, StoredMessage, SearchResult, WorkingMemoryScope, WorkingMemoryFormat } from './memory/types.js';
