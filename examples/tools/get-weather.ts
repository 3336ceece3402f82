/**
 * Example tool: `getWeather({city})` → `{city, tempC: 21}`. A stand-in for a real weather API, so the
 * example agent can show a tool loop offline (the demo model calls it when asked about weather).
 */
import { z } from 'zod';
import { createTool } from 'eventloom';

export const getWeatherTool = createTool({
  name: 'getWeather',
  description: 'Get the current weather for a city',
  parameters: z.object({ city: z.string().min(1).describe('The city, e.g. Paris') }),
  execute: ({ city }) => ({ city, tempC: 21 }),
});
