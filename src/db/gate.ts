// The connection gate of the embedded backend: one transaction at a time owns the one connection.

/** First come, first served ownership of the connection; release hands it to the next waiter directly. */
export class Gate {
  busy = false;
  private readonly waiters: Array<() => void> = [];
  acquire(): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.busy = false;
  }
}
