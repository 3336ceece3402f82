/**
 * Answers of read-only registry GETs (`GET /agents`, `/workflows`, `/tools`, their details, the agent cards)
 * encoded once: the `{success: true, data}` envelope the edge would build, as bytes, kept until
 * what they describe changes. A registry is fixed at start except for a few late changes (tools an
 * MCP server adds to an agent, a memory service attached or detached, an embedder learning its
 * dimensions); each of those calls `describedStateChanged()`, which drops every cached answer.
 * The bytes are exactly `JSON.stringify` of the envelope, so a cached answer equals a fresh one.
 */
import type { RouteResult } from './routes.js';

let epoch = 0;

/** Something a registry GET describes changed: every cached answer is encoded again on its next use. */
export function describedStateChanged(): void {
  epoch++;
}

/** At most this many answers per cache (details are keyed by id; unknown ids throw and are not kept). */
const MAX_ANSWERS = 1_000;

export class EncodedAnswers {
  private epoch = -1;
  private source: unknown;
  private readonly answers = new Map<string, RouteResult>();

  /**
   * `ok(build())` for `key`, encoded on first use and reused while the epoch and `source` (the
   * registry object the answer is built from, which a restart of its module replaces) stay the same.
   * `bare`: the value without the envelope (a `bare-json` answer, such as the A2A agent card).
   */
  answer(key: string, source: unknown, build: () => unknown, bare = false): RouteResult {
    if (this.epoch !== epoch || this.source !== source) {
      this.answers.clear();
      this.epoch = epoch;
      this.source = source;
    }
    let answer = this.answers.get(key);
    if (answer === undefined) {
      const body = Buffer.from(JSON.stringify(bare ? build() : { success: true, data: build() }));
      answer = { kind: 'body', status: 200, contentType: 'application/json', body };
      if (this.answers.size >= MAX_ANSWERS) this.answers.clear();
      this.answers.set(key, answer);
    }
    return answer;
  }
}
