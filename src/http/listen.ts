/**
 * Listening: a uWS app with the edge mounted, bound exclusively to one address and port, and the handle that
 * stops it. A busy port is an error, never a silent fallback or a shared port.
 */
import uWS, { type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';

export interface RunningServer {
  app: TemplatedApp;
  port: number;
  host: string;
  /** stop accepting connections; resolves once the listen socket is closed */
  stopListening(): void;
  /** force-close everything */
  close(): void;
}

/** What `listen` needs of the edge: its handlers, registered for the address listened on. */
export interface Mountable {
  mount(app: TemplatedApp, bindAddress: string): void;
}

/**
 * uSockets' listen option for an exclusive bind. Without it uWS sets SO_REUSEPORT, so a second
 * server on a busy port "listens" too and the kernel splits connections between the two processes.
 * The addon exports the value at run time; its types only declare `listen(port, options, cb)`, not
 * the `(host, port, options, cb)` form the addon also accepts.
 */
const LIBUS_LISTEN_EXCLUSIVE_PORT: number = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT?: number }).LIBUS_LISTEN_EXCLUSIVE_PORT ?? 1;
type ListenWithOptions = (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => unknown;

/** Starts a uWS app with the edge mounted; a busy port is an error, never a silent fallback or a shared port. */
export function listen(edge: Mountable, host: string, port: number): Promise<RunningServer> {
  const app = uWS.App();
  edge.mount(app, host);
  return new Promise((resolve, reject) => {
    (app.listen as unknown as ListenWithOptions).call(app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket: us_listen_socket | false) => {
      if (!socket) {
        reject(new Error(`Cannot listen on ${host}:${port}: the port is in use or the address is not available`));
        return;
      }
      const actual = uWS.us_socket_local_port(socket);
      let listening: us_listen_socket | undefined = socket;
      resolve({
        app,
        port: actual,
        host,
        stopListening() {
          if (listening) uWS.us_listen_socket_close(listening);
          listening = undefined;
        },
        close() {
          if (listening) uWS.us_listen_socket_close(listening);
          listening = undefined;
          (app as unknown as { close?: () => void }).close?.();
        },
      });
    });
  });
}
