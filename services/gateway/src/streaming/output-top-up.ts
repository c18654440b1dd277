/**
 * Top-ups of a stream's output reservation: a stream whose next event would take its output past what the call
 * reserved ({@link OutputMeter}) is not cut at once when more may be reserved. The relay parks that event, and
 * every event the same upstream read brought after it, asks for a top-up once the read is parsed, raises the
 * meter's limit by what was granted and replays the parked events in order. A refused top-up replays them too:
 * the first that does not fit then cuts the stream as before. While a top-up is asked for, the upstream is not
 * read (it is held back like a client that does not read, `client-flow.ts`).
 *
 * A stream that stays within its reservation never reaches this: no promise, no allocation per event.
 */
import type { EventSourceMessage } from "eventsource-parser";
import type { OutputMeter } from "./output-meter.js";

/**
 * Asks for more output for a stream: resolves the output tokens granted (all choices together), 0 when none is
 * (then the stream is cut). Must not reject.
 */
export type TopUp = () => Promise<number>;

/** The events parked while a top-up is asked for; see the module comment. */
export class ParkedEvents {
  private parked: EventSourceMessage[] | undefined;
  /** A top-up was refused: no more are asked for, the next event that does not fit cuts the stream. */
  private refused = false;

  /** @param topUp undefined: the stream is cut at the meter's limit without asking. */
  constructor(
    private readonly meter: OutputMeter,
    private readonly topUp: TopUp | undefined,
  ) {}

  /** While events are parked, queues `event` behind them: true when it did (the relay leaves it for later). */
  holds(event: EventSourceMessage): boolean {
    if (this.parked === undefined) return false;
    this.parked.push(event);
    return true;
  }

  /** `event` does not fit the meter: parks it when a top-up may be asked for (true), else false (cut it). */
  park(event: EventSourceMessage): boolean {
    if (this.topUp === undefined || this.refused) return false;
    this.parked = [event];
    return true;
  }

  /**
   * When events are parked: asks for top-ups and replays the events to `onEvent` until none is parked (see the
   * module comment). Undefined when nothing is parked.
   */
  resume(onEvent: (event: EventSourceMessage) => void): Promise<void> | undefined {
    return this.parked === undefined ? undefined : this.replay(onEvent);
  }

  private async replay(onEvent: (event: EventSourceMessage) => void): Promise<void> {
    while (this.parked !== undefined) {
      const granted = this.refused || this.topUp === undefined ? 0 : await this.topUp();
      if (granted > 0) this.meter.raise(granted);
      else this.refused = true;
      const events = this.parked;
      this.parked = undefined;
      // An event that does not fit parks again (or cuts): the ones after it are then held behind it.
      for (const event of events) onEvent(event);
    }
  }
}
