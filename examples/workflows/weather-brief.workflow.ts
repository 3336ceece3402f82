/**
 * `weather-brief` ("Weather brief"): an `andAgent` step. It asks the `assistant` agent about the
 * weather in a city and returns the agent's answer with the city. The agent's run (its getWeather
 * call included) is recorded as a run of its own, linked to this execution (`GET
 * /agents/assistant/history`). On the offline demo model the assistant calls getWeather and answers
 * `The weather in Oslo is 21°C.`
 */
import { z } from 'zod';
import { andAgent, createWorkflow } from 'eventloom';

const City = z.object({ city: z.string().min(1) });

export const weatherBriefWorkflow = createWorkflow(
  {
    id: 'weather-brief',
    name: 'Weather brief',
    purpose: 'Ask the assistant agent for the weather in a city',
    input: City.meta({ examples: [{ city: 'Oslo' }] }),
    result: z.object({ city: z.string(), brief: z.string() }),
  },
  andAgent({
    id: 'ask-assistant',
    name: 'Ask the assistant',
    agent: 'assistant',
    prompt: ({ city }: z.infer<typeof City>) => `What is the weather in ${city}?`,
    // without `schema` the agent's output is its text; `schema: z.object(...)` would ask for a typed object instead
    map: (text: string, { data }) => ({ city: data.city, brief: text }),
  }),
);
