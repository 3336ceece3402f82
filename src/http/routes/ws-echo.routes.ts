/**
 * `WS /ws`: the connection test and echo endpoint of docs/api-reference.md "WebSocket feeds".
 */
import { isInvalidWsJson, type WsRouteDef } from '../../contract/routes.js';

export const wsEchoRoute: WsRouteDef = {
  path: '/ws',
  auth: 'management',
  summary: 'WebSocket connection test: greets, then echoes every JSON message',
  open(client, { user, authenticated }) {
    const identity = user ? ((user.id ?? user.sub) as string | undefined) : undefined;
    client.send({
      type: 'CONNECTION_TEST',
      success: true,
      data: {
        message: 'WebSocket test connection successful',
        timestamp: new Date().toISOString(),
        authenticated,
        ...(identity !== undefined ? { userId: String(identity) } : {}),
      },
    });
  },
  message(client, message) {
    if (isInvalidWsJson(message)) return;
    client.send({ type: 'ECHO', success: true, data: message });
  },
};
