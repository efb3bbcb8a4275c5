/**
 * Hides what URLs may carry after their origin (RPC providers put API keys in the path or query),
 * so error texts can be logged and stored. Pure: the workflow bundle uses it too.
 */
export function redactUrls(text: string): string {
  return text.replace(/\b(https?|wss?):\/\/([^/\s"'?#]+)[^\s"']*/g, (_match, scheme: string, host: string) => `${scheme}://${host.replace(/^[^@]*@/, '')}/…`);
}

/** The origin of a URL only, for printing configuration. */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}
