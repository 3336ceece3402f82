/**
 * The global sequences this node appended, as ranges of its recent commits: `appendedHere` of the
 * shared store (../capabilities.ts), so that work done once per record cluster-wide (exporting a
 * span) is done by the node that appended it. Sequences are told by number, not by record object:
 * the tail may deliver a node's own records read back from the database before its commit reply
 * arrives. Bounded: the oldest ranges go first, far behind anything a subscriber still folds.
 */
const MAX_RANGES = 8192;

export class OwnSequences {
  /** [first, last] ranges in ascending order (commits are sequenced in order) */
  private readonly ranges: Array<[number, number]> = [];

  add(first: number, last: number): void {
    const tail = this.ranges[this.ranges.length - 1];
    if (tail && tail[1] + 1 === first) tail[1] = last;
    else this.ranges.push([first, last]);
    if (this.ranges.length > MAX_RANGES) this.ranges.splice(0, this.ranges.length - MAX_RANGES);
  }

  has(seq: number): boolean {
    const r = this.ranges;
    let lo = 0;
    let hi = r.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (seq < r[mid][0]) hi = mid - 1;
      else if (seq > r[mid][1]) lo = mid + 1;
      else return true;
    }
    return false;
  }
}
