/**
 * Example agent `assistant`: a helpful assistant with the `getWeather` tool. Its model is
 * EVENTLOOM_MODEL when set (e.g. `openai/gpt-4o-mini`), else the offline demo model, which echoes
 * (`You said: ...`), calls `getWeather` when a prompt mentions the weather, and `issueRefund` (which
 * needs approval) when a prompt asks for a refund.
 */
import { getWeatherTool } from '../tools/get-weather.js';
import { issueRefundTool } from '../tools/issue-refund.js';
import { agentMemory, createAgent } from 'eventloom';

export const assistantAgent = createAgent({
  id: 'assistant',
  name: 'Assistant',
  description: 'A helpful assistant that can look up the weather',
  instructions: 'You are a helpful assistant. Use the getWeather tool when the user asks about the weather and the issueRefund tool when they ask for a refund, and answer briefly.',
  tools: [getWeatherTool, issueRefundTool],
  // remembers conversations (per memory.userId / memory.conversationId) and keeps a markdown working memory per conversation
  memory: agentMemory({ workingMemory: { enabled: true, scope: 'conversation', format: 'markdown' } }),
});
