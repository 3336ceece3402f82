/**
 * A TCP proxy in front of a test server, so a test can cut every open connection (SSE streams, WebSockets,
 * keep-alive sockets) at once, as a network failure would, while new connections keep working.
 */
import net from 'node:net';

export interface TcpProxy {
  url: string;
  /** destroys every connection open now (both sides); returns how many were cut */
  cutAll(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    open.add(client);
    const drop = () => {
      open.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    cutAll() {
      const n = open.size;
      for (const s of [...open]) s.destroy();
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
