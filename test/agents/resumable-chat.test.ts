/** The buffer behind resumable chats: what a reader that resumes with Last-Event-ID receives. */
import { describe, expect, it } from 'vitest';
import { ChatBuffer } from '../../src/agents/resumable-chat.js';
import type { SseSink } from '../../src/contract/routes.js';

const frame = (n: number) => new TextEncoder().encode(`id: ${n}\ndata: ${n}\n\n`);
const text = (f: Uint8Array) => new TextDecoder().decode(f);

function sink() {
  const got: string[] = [];
  const s: SseSink = { closed: false, send: (f) => (got.push(text(f)), true), end: () => undefined, onClose: () => undefined };
  return { s, got };
}

describe('resumable chat buffer', () => {
  it('sends a reader that resumes ahead of the buffer only the frames after its Last-Event-ID, live', () => {
    const buffer = new ChatBuffer(
      'k',
      () => undefined,
      () => undefined,
    );
    const reader = sink();
    buffer.attach(reader.s, 2); // the client had frames 1 and 2 from an earlier connection
    for (let n = 1; n <= 4; n++) buffer.push(frame(n));
    expect(reader.got).toEqual([text(frame(3)), text(frame(4))]);
  });

  it('replays the buffered frames after Last-Event-ID, then follows live without repeating one', () => {
    const buffer = new ChatBuffer(
      'k',
      () => undefined,
      () => undefined,
    );
    for (let n = 1; n <= 3; n++) buffer.push(frame(n));
    const reader = sink();
    buffer.attach(reader.s, 1);
    buffer.push(frame(4));
    expect(reader.got).toEqual([text(frame(2)), text(frame(3)), text(frame(4))]);
  });
});
