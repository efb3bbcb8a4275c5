import { isTerminalStatus } from '../../domain/status.ts';
import type { WaitOptions } from '../options.ts';
import type { View } from './getTransfer.ts';

/** What one waitForCompletion has seen so far, shared by the event stream and the polling that may follow it. */
export interface StatusTracker {
  /** The id of the last event reported: a reconnecting stream resumes after it (Last-Event-ID). */
  readonly lastId: string | undefined;
  /** Reports a view once per status (and once per event id on the stream); true when the transfer is finished. */
  seen(view: View, id?: string): boolean;
}

export function statusTracker(waitOptions: WaitOptions): StatusTracker {
  let lastId: string | undefined;
  let lastStatus: string | undefined;
  return {
    get lastId() {
      return lastId;
    },
    seen(view, id) {
      const fresh = id !== undefined ? lastId === undefined || Number(id) > Number(lastId) : view.status !== lastStatus;
      if (fresh && view.status !== lastStatus) waitOptions.onStatus?.(view);
      if (id !== undefined && fresh) lastId = id;
      lastStatus = view.status;
      return isTerminalStatus(view.status);
    },
  };
}
