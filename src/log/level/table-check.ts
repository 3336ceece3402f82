/**
 * Checks LevelDB's table files (`*.ldb`, `*.sst`) against the checksums LevelDB wrote into them.
 *
 * Why: LevelDB (as classic-level opens it) reads table blocks without verifying their checksums and
 * skips what it cannot decode, so a garbled or cut table shows up later as missing records or as a
 * read error in the middle of a running server. Reading every block here, before the log is used,
 * turns that into one clear report at start.
 *
 * Tables are immutable once written, so a table checked once is not read again while its size and
 * modification time stay the same (the list of checked tables is kept in `EVENTLOOM-TABLES` beside
 * them); a table written to after its check (what damage by any program does) is checked again.
 *
 * Format (LevelDB table_format.md): a 48-byte footer ending in a magic number holds the handles
 * (varint offset, varint size) of the metaindex and index blocks; the index block maps keys to the
 * handles of data blocks; every block is followed by a type byte (0 raw, 1 snappy) and a masked
 * CRC-32C of the block and that byte. Index blocks may be snappy-compressed, so they are
 * decompressed to read the handles; data blocks are only checksummed.
 */
import { readFile, readdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

const FOOTER = 48;
const TRAILER = 5;
const MAGIC = Buffer.from([0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb]);
const CACHE_FILE = 'EVENTLOOM-TABLES';

// ---- CRC-32C (Castagnoli), table-driven ---------------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32c(buf: Uint8Array, start = 0, end = buf.length, seed = 0): number {
  let c = ~seed >>> 0;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** LevelDB stores checksums masked (a checksum of data holding checksums is otherwise weak). */
function unmask(masked: number): number {
  const rot = (masked - 0xa282ead8) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
}

// ---- decoding helpers ---------------------------------------------------------------------------

class Bad extends Error {}

function varint(buf: Uint8Array, pos: number, end = buf.length): [number, number] {
  let result = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw new Bad('a varint runs past its block');
    const b = buf[pos++];
    result += (b & 0x7f) * mul;
    if (b < 0x80) return [result, pos];
    mul *= 128;
  }
  throw new Bad('a varint is too long');
}

/** Snappy raw-format decompression (only index blocks are decompressed; they are small). */
function unsnappy(src: Uint8Array): Buffer {
  let [len, p] = varint(src, 0);
  if (len > 64 * 1024 * 1024) throw new Bad('a compressed block claims an impossible size');
  const out = Buffer.alloc(len);
  let o = 0;
  while (p < src.length) {
    const tag = src[p++];
    let n: number;
    let offset = 0;
    switch (tag & 3) {
      case 0: {
        n = tag >>> 2;
        if (n >= 60) {
          const bytes = n - 59;
          if (p + bytes > src.length) throw new Bad('a compressed block is cut short');
          n = 0;
          for (let i = 0; i < bytes; i++) n += src[p + i] * 2 ** (8 * i);
          p += bytes;
        }
        n += 1;
        if (p + n > src.length || o + n > len) throw new Bad('a compressed block is cut short');
        out.set(src.subarray(p, p + n), o);
        p += n;
        o += n;
        continue;
      }
      case 1:
        if (p >= src.length) throw new Bad('a compressed block is cut short');
        n = ((tag >>> 2) & 7) + 4;
        offset = ((tag >>> 5) << 8) | src[p++];
        break;
      case 2:
        if (p + 2 > src.length) throw new Bad('a compressed block is cut short');
        n = (tag >>> 2) + 1;
        offset = src[p] | (src[p + 1] << 8);
        p += 2;
        break;
      default:
        if (p + 4 > src.length) throw new Bad('a compressed block is cut short');
        n = (tag >>> 2) + 1;
        offset = (src[p] | (src[p + 1] << 8) | (src[p + 2] << 16)) + src[p + 3] * 2 ** 24;
        p += 4;
    }
    if (offset === 0 || offset > o || o + n > len) throw new Bad('a compressed block refers outside itself');
    for (let i = 0; i < n; i++, o++) out[o] = out[o - offset];
  }
  if (o !== len) throw new Bad('a compressed block decompresses to the wrong size');
  return out;
}

interface Handle {
  offset: number;
  size: number;
}

/** The checked contents of the block at `h` (decompressed when it is an index block). */
function readBlock(file: Buffer, h: Handle, what: string, decode: boolean): Buffer {
  if (h.offset + h.size + TRAILER > file.length - FOOTER) throw new Bad(`the ${what} at offset ${h.offset} lies past the end of the file`);
  const type = file[h.offset + h.size];
  const stored = file.readUInt32LE(h.offset + h.size + 1);
  if (crc32c(file, h.offset, h.offset + h.size + 1) !== unmask(stored)) throw new Bad(`the ${what} at offset ${h.offset} fails its checksum`);
  if (type !== 0 && type !== 1) throw new Bad(`the ${what} at offset ${h.offset} has an unknown type ${type}`);
  const raw = file.subarray(h.offset, h.offset + h.size);
  return decode && type === 1 ? unsnappy(raw) : raw;
}

/** The values of a block's entries (keys are not needed to find the blocks they point to). */
function blockValues(block: Buffer): Buffer[] {
  if (block.length < 4) throw new Bad('an index block is too short');
  const restarts = block.readUInt32LE(block.length - 4);
  const end = block.length - 4 * (restarts + 1);
  if (end < 0) throw new Bad('an index block has a malformed restart array');
  const values: Buffer[] = [];
  let p = 0;
  while (p < end) {
    let nonShared: number, valueLength: number;
    [, p] = varint(block, p, end);
    [nonShared, p] = varint(block, p, end);
    [valueLength, p] = varint(block, p, end);
    p += nonShared;
    if (p + valueLength > end) throw new Bad('an index block entry runs past its block');
    values.push(block.subarray(p, p + valueLength));
    p += valueLength;
  }
  return values;
}

function handleOf(buf: Uint8Array, pos = 0): [Handle, number] {
  const [offset, p1] = varint(buf, pos);
  const [size, p2] = varint(buf, p1);
  return [{ offset, size }, p2];
}

/** Reads every block of a table file and returns what is wrong with it, or undefined when it is whole. */
export function tableProblem(file: Buffer): string | undefined {
  try {
    if (file.length < FOOTER) return `it is cut short (${file.length} bytes, no footer)`;
    if (!file.subarray(file.length - 8).equals(MAGIC)) return 'its footer is missing or damaged (the file is cut short or overwritten)';
    const footer = file.subarray(file.length - FOOTER);
    const [metaHandle, p] = handleOf(footer);
    const [indexHandle] = handleOf(footer, p);
    const index = readBlock(file, indexHandle, 'index block', true);
    for (const v of blockValues(index)) readBlock(file, handleOf(v)[0], 'data block', false);
    const meta = readBlock(file, metaHandle, 'metaindex block', true);
    for (const v of blockValues(meta)) readBlock(file, handleOf(v)[0], 'filter block', false);
    return undefined;
  } catch (err) {
    if (err instanceof Bad || err instanceof RangeError) return err.message;
    throw err;
  }
}

export interface TableDamage {
  /** file name inside the log directory */
  file: string;
  problem: string;
}

const isTable = (name: string) => /^\d+\.(ldb|sst)$/.test(name);

/**
 * Checks the table files of a LevelDB directory that were not checked in their present state yet,
 * and remembers the whole ones. A table that disappears meanwhile (compacted away) is skipped.
 */
export async function checkTables(dir: string): Promise<TableDamage[]> {
  const cachePath = path.join(dir, CACHE_FILE);
  const known = new Map<string, string>();
  try {
    for (const line of (await readFile(cachePath, 'utf8')).split('\n')) {
      const [name, stamp] = line.split(' ', 2);
      if (name && stamp) known.set(name, stamp);
    }
  } catch {
    // no list yet (or unreadable): every table is checked
  }
  const damaged: TableDamage[] = [];
  const whole: string[] = [];
  let changed = false;
  for (const name of (await readdir(dir)).filter(isTable).sort()) {
    try {
      const s = await stat(path.join(dir, name));
      const stamp = `${s.size}:${s.mtimeMs}`;
      if (known.get(name) !== stamp) {
        changed = true;
        const problem = tableProblem(await readFile(path.join(dir, name)));
        if (problem) {
          damaged.push({ file: name, problem });
          continue;
        }
      }
      whole.push(`${name} ${stamp}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      changed = true;
    }
  }
  if (changed || whole.length !== known.size) {
    // written aside and renamed: a crash never leaves a half-written list that vouches for a table
    try {
      await writeFile(`${cachePath}.tmp`, whole.join('\n') + '\n');
      await rename(`${cachePath}.tmp`, cachePath);
    } catch {
      // only a saving: without the list, the next open checks the tables again
    }
  }
  return damaged;
}
