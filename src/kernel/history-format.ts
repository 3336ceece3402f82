/**
 * The header of the portable history format (JSON lines: this header, then one log record per line,
 * whole streams in order), shared by `eventloom export` (src/cli/history-file.ts, which also parses
 * it) and retention's archive files (src/workflows/retention-archive.ts), so an archive is an export
 * that `eventloom import` reads back.
 */
import { VERSION } from '../version.js';

export const HISTORY_FORMAT = 'eventloom-history';
export const HISTORY_FORMAT_VERSION = 1;

export interface HistoryHeader {
  format: typeof HISTORY_FORMAT;
  formatVersion: number;
  eventloomVersion: string;
  exportedAt: string;
  /** how many streams follow */
  streams: number;
}

export function historyHeader(streams: number, now = new Date()): HistoryHeader {
  return { format: HISTORY_FORMAT, formatVersion: HISTORY_FORMAT_VERSION, eventloomVersion: VERSION, exportedAt: now.toISOString(), streams };
}
