import { isTerminalStatus } from '../../domain/status.ts';
import type { WaitOptions } from '../options.ts';
import type { View } from './getTransfer.ts';

/** What one waitForCompletion has seen so far, shared by the event stream and the polling that may follow it. */
export interface StatusTracker {
  /** The id of the last event reported: a reconnecting stream resumes after it (Last-Event-ID). */
  readonly lastId: string | undefined;
  /**
   * Reports a view once per status (events only when newer than the last one reported); true when the transfer is
   * finished. An error of the caller's onStatus is thrown as OnStatusFailure: the wait ends with it, never retried.
   */
  seen(view: View, id?: string): boolean;
}

/** The caller's onStatus threw `error`: not a network failure to reconnect after, the wait's own end. */
export class OnStatusFailure {
  constructor(readonly error: unknown) {}
}

/** Whether event id `id` comes after `last`: by number (the API's ids are status sequence numbers), else any other id is. */
export function isNewerEventId(id: string, last: string | undefined): boolean {
  if (last === undefined) return true;
  if (/^\d+$/.test(id) && /^\d+$/.test(last)) return BigInt(id) > BigInt(last);
  return id !== last;
}

export function statusTracker(waitOptions: WaitOptions): StatusTracker {
  let lastId: string | undefined;
  let lastStatus: string | undefined;
  return {
    get lastId() {
      return lastId;
    },
    seen(view, id) {
      // A replayed or older event changes nothing: not the last status, not the last id.
      if (id !== undefined && !isNewerEventId(id, lastId)) return isTerminalStatus(view.status);
      if (id !== undefined) lastId = id;
      if (view.status !== lastStatus) {
        lastStatus = view.status;
        try {
          waitOptions.onStatus?.(view);
        } catch (error) {
          throw new OnStatusFailure(error);
        }
      }
      return isTerminalStatus(view.status);
    },
  };
}
