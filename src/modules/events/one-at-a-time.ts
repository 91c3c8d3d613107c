/**
 * Runs `pass` one at a time: a wake while a pass runs asks for one more pass right after it (so
 * whatever woke it is seen), however many wakes came meanwhile. The events feed's reads and the
 * webhook sender's passes both run this way.
 */
export class OneAtATime {
  private running = false;
  private again = false;

  constructor(private readonly pass: () => Promise<void>) {}

  wake(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pass().finally(() => {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }
}
