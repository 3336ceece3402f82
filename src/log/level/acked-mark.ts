/**
 * The acknowledged-head mark: a 17-byte file (`EVENTLOOM-ACKED`, beside LevelDB's files) holding
 * the last global seq that was durable, so that records LevelDB loses without a word (it silently
 * drops a write-ahead log's tail that is cut short) are counted at the next open.
 *
 * It is rewritten in place after each group commit's fsync, never before, so it never names a
 * record that was not durable: it can only lag (a power cut may keep an older value, as it is not
 * fsync'd itself), which can hide a loss but never invent one. A fixed width makes every write one
 * small pwrite that replaces the whole value.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';

const ACKED_FILE = 'EVENTLOOM-ACKED';
const WIDTH = 16;

/** The mark in `dir`, or undefined when there is none (a log written before marks existed) or it is unreadable. */
export function readAckedMark(dir: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(dir, ACKED_FILE), 'latin1');
  } catch {
    return undefined;
  }
  const n = Number(text.trim());
  return text.trim() !== '' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

export class AckedMark {
  private fd: number | undefined;
  private readonly buf = Buffer.alloc(WIDTH + 1);

  constructor(dir: string, seq: number) {
    this.fd = openSync(path.join(dir, ACKED_FILE), 'w');
    this.write(seq);
  }

  /** Records that `seq` is durable. Called right after a group commit's fsync. */
  write(seq: number): void {
    if (this.fd === undefined) return;
    this.buf.write(String(seq).padStart(WIDTH, '0') + '\n', 0, 'latin1');
    try {
      writeSync(this.fd, this.buf, 0, this.buf.length, 0);
    } catch {
      // The mark only helps to count a loss later; failing to write it must not fail an append.
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Sets the mark of a log that is not open (after a repair). */
export function writeAckedMark(dir: string, seq: number): void {
  const mark = new AckedMark(dir, seq);
  mark.close();
}
