/**
 * A small Server-Sent Events reader over a fetch body (the WHATWG event-stream format: `event:`, `data:`, `id:`,
 * `retry:`, comments). fetch rather than EventSource because EventSource cannot send the statusToken header.
 */
export interface ServerSentEvent {
  /** `message` when the server named none. */
  event: string;
  data: string;
  /** The last `id:` the stream set (carried over to later events, as EventSource does). */
  id: string | undefined;
}

export interface SseReaderCallbacks {
  /** Return true to stop reading (the rest of the stream is cancelled). */
  onEvent(event: ServerSentEvent): boolean;
  /** Any line at all arrived (an event or a `:` comment): the stream is alive and not buffered. */
  onActivity?(): void;
  /** The server asked for this reconnection delay (`retry:`). */
  onRetry?(milliseconds: number): void;
}

/**
 * Reads the stream to its end, until an `onEvent` returns true, or until `signal` aborts (rejecting with its
 * reason). The abort is handled here rather than left to fetch: a read pending on some fetch bodies does not
 * settle when their request is aborted.
 */
export async function readEventStream(body: ReadableStream<Uint8Array>, callbacks: SseReaderCallbacks, signal?: AbortSignal): Promise<void> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let lastId: string | undefined;
  let eventName = '';
  let data: string[] = [];
  let sawData = false;
  let stop = false;

  const line = (text: string) => {
    callbacks.onActivity?.();
    if (text === '') {
      if (sawData) stop = callbacks.onEvent({ event: eventName || 'message', data: data.join('\n'), id: lastId }) === true;
      eventName = '';
      data = [];
      sawData = false;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') eventName = value;
    else if (field === 'data') {
      data.push(value);
      sawData = true;
    } else if (field === 'id' && !value.includes('\0')) lastId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) callbacks.onRetry?.(Number(value));
  };

  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => {});
  try {
    while (!stop) {
      signal?.throwIfAborted();
      const { done, value } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      // Lines end in \r\n, \n or \r; a trailing \r may be the first half of a \r\n still in flight.
      while (!stop) {
        const match = /\r\n|\n|\r(?!$)/.exec(buffer);
        if (!match) break;
        line(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
      }
    }
    // An event not ended by a blank line when the stream closes is dropped (as the format says).
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    // Not awaited: cancelling some fetch bodies never settles either.
    reader.cancel().catch(() => {});
  }
}
