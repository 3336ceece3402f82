/**
 * The portable history format of `eventloom export` / `import` / `replay`: JSON lines. The first
 * line is a header naming the format; every other line is one log record exactly as the log holds
 * it (`seq`, `stream`, `streamSeq`, `type`, `data`, `at`, and on a stream's first record `kind`,
 * the machine kind@version). A stream's records are complete (streamSeq 1..n) and in order; global
 * `seq` values are the source's and are reassigned on import.
 */
import { readFileSync } from 'node:fs';
import { isStreamId } from '../log/names.js';
import type { LogRecord } from '../log/types.js';
import { HISTORY_FORMAT, HISTORY_FORMAT_VERSION, type HistoryHeader } from '../kernel/history-format.js';
import { CliError } from './cli-error.js';

/** A history read from a file: streams in the order they appear, each complete from streamSeq 1. */
export type History = Map<string, LogRecord[]>;

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 1;

/** Parses and checks a history file's text; every problem names the file and line. */
function parseHistory(text: string, file: string): History {
  const lines = text.split('\n');
  const streams: History = new Map();
  let header: HistoryHeader | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.length === 0) continue;
    const where = `${file}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new CliError(`${where}: not a JSON line`);
    }
    if (!header) {
      if (!isObject(value) || value.format !== HISTORY_FORMAT) throw new CliError(`${where}: not an eventloom history (the first line must be the header {"format":"${HISTORY_FORMAT}",...})`);
      if (value.formatVersion !== HISTORY_FORMAT_VERSION)
        throw new CliError(`${where}: history format version ${String(value.formatVersion)} is not supported (this build reads version ${HISTORY_FORMAT_VERSION})`);
      header = value as unknown as HistoryHeader;
      continue;
    }
    if (!isObject(value)) throw new CliError(`${where}: a record must be a JSON object`);
    const r = value as Partial<LogRecord>;
    if (!isStreamId(r.stream)) throw new CliError(`${where}: record has no valid "stream"`);
    if (!isCount(r.seq) || !isCount(r.streamSeq)) throw new CliError(`${where}: record needs integer "seq" and "streamSeq" >= 1`);
    if (typeof r.type !== 'string' || r.type.length === 0) throw new CliError(`${where}: record has no "type"`);
    if (typeof r.at !== 'number' || !Number.isFinite(r.at)) throw new CliError(`${where}: record has no numeric "at"`);
    if (!('data' in r)) throw new CliError(`${where}: record has no "data"`);
    let list = streams.get(r.stream);
    if (!list) streams.set(r.stream, (list = []));
    if (r.streamSeq !== list.length + 1) throw new CliError(`${where}: stream ${r.stream} jumps to streamSeq ${r.streamSeq} after ${list.length} (histories hold whole streams, in order)`);
    if (r.streamSeq === 1 && typeof r.kind !== 'string') throw new CliError(`${where}: the first record of ${r.stream} has no machine "kind"`);
    list.push(r as LogRecord);
  }
  if (!header) throw new CliError(`${file}: empty file, not an eventloom history`);
  return streams;
}

export function readHistoryFile(file: string): History {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  return parseHistory(text, file);
}
