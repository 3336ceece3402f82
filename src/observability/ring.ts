/**
 * A fixed-capacity ring buffer: pushing past the capacity evicts the oldest item. Used by the log buffers
 * (`/api/logs`: 1000 entries; observability: 50,000 log records) so memory stays bounded whatever the load.
 */
export class Ring<T> {
  private readonly items: Array<T | undefined>;
  private start = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.items = new Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Adds an item; returns the evicted one when the ring was full. */
  push(item: T): T | undefined {
    if (this.count < this.capacity) {
      this.items[(this.start + this.count) % this.capacity] = item;
      this.count++;
      return undefined;
    }
    const evicted = this.items[this.start];
    this.items[this.start] = item;
    this.start = (this.start + 1) % this.capacity;
    return evicted;
  }

  /** Item `i` counted from the oldest (0) */
  at(i: number): T | undefined {
    if (i < 0 || i >= this.count) return undefined;
    return this.items[(this.start + i) % this.capacity];
  }

  /** Oldest first. */
  toArray(): T[] {
    const out: T[] = new Array(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.items[(this.start + i) % this.capacity] as T;
    return out;
  }

  /** Newest first, stopping once `take` items were collected that pass `keep`. */
  newest(keep: (item: T) => boolean, take: number): T[] {
    const out: T[] = [];
    for (let i = this.count - 1; i >= 0 && out.length < take; i--) {
      const item = this.items[(this.start + i) % this.capacity] as T;
      if (keep(item)) out.push(item);
    }
    return out;
  }

  clear(): void {
    this.items.fill(undefined);
    this.start = 0;
    this.count = 0;
  }
}
