/**
 * A mailbox: runs the tasks given to it strictly one after another (one writer per stream).
 * A task's "decision" part runs synchronously when it reaches the head of the queue; the promise it
 * returns (durability) does not block the next task, which is what lets the host pipeline appends.
 */
export class Mailbox {
  private queue: Array<() => void> = [];
  private running = false;

  get idle(): boolean {
    return !this.running && this.queue.length === 0;
  }

  /**
   * Runs `task` after every earlier task has *started and decided*; resolves with the task's result.
   * Tasks are synchronous deciders returning a promise of their durable outcome.
   */
  run<T>(task: () => Promise<T>): Promise<T> {
    if (!this.running && this.queue.length === 0) {
      // idle (the common case: one event at a time per stream): run it now and hand back its own
      // promise, without a wrapper promise and queue entry; tasks it enqueues run right after it
      this.running = true;
      let p: Promise<T>;
      try {
        p = task();
      } catch (err) {
        p = Promise.reject(err);
      } finally {
        this.running = false;
      }
      if (this.queue.length > 0) this.drain();
      return p;
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push(() => {
        let p: Promise<T>;
        try {
          p = task();
        } catch (err) {
          p = Promise.reject(err);
        }
        p.then(resolve, reject);
      });
      if (!this.running) this.drain();
    });
  }

  private drain(): void {
    this.running = true;
    while (this.queue.length > 0) {
      const next = this.queue.shift()!;
      next();
    }
    this.running = false;
  }
}
