/**
 * One HTTP/1.1 exchange as bytes: writes a request head given as text on its own connection and returns the
 * response exactly as it came off the socket (status line, headers in their order, body), so two servers can be
 * compared byte for byte. Reads one response (by Content-Length; none for HEAD or 204), then closes.
 */
import net from 'node:net';

export interface RawExchange {
  /** the response head without its `Date` line (the one part that differs between two identical answers) */
  head: string;
  status: number;
  body: Buffer;
}

export function rawExchange(port: number, request: string | Buffer, opts: { head?: boolean; timeoutMs?: number } = {}): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${opts.timeoutMs ?? 5000} ms; got ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`));
    }, opts.timeoutMs ?? 5000);
    const done = (r: RawExchange) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const tryParse = (closed: boolean) => {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (closed) done({ head: buf.toString('latin1'), status: 0, body: Buffer.alloc(0) });
        return;
      }
      const headText = buf.subarray(0, end).toString('latin1');
      const status = Number(headText.slice(9, 12));
      const length = /\r\ncontent-length: *(\d+)/i.exec(headText);
      const bodyBytes = opts.head || status === 204 || status === 304 ? 0 : length ? Number(length[1]) : closed ? buf.length - end - 4 : -1;
      if (bodyBytes < 0) return;
      if (buf.length - end - 4 < bodyBytes) {
        if (closed) done({ head: stripDate(headText), status, body: buf.subarray(end + 4) });
        return;
      }
      done({ head: stripDate(headText), status, body: buf.subarray(end + 4, end + 4 + bodyBytes) });
    };
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

const stripDate = (head: string) => head.replace(/\r\ndate: [^\r]*/i, '');

/** A request head as text: `GET /path HTTP/1.1`, a Host header (`127.0.0.1` unless given), then `headers` in order. */
export function requestHead(method: string, target: string, headers: Array<[string, string]> = [], host = '127.0.0.1'): string {
  return `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}
