/**
 * Browser origins as a partner's key allows them (api_keys.allowed_origins): written exactly as a browser sends the
 * Origin header, so that a request's origin matches a stored one by equality. Pure rules; src/partners/apiKeys.ts
 * and src/partners/allowedOrigins.ts store them.
 */

/** More than a few origins per key is a sign of a key shared between unrelated sites. */
export const MAX_ALLOWED_ORIGINS = 20;

/** Hosts a page may be served from over plain http: the developer's own machine (a browser treats them as secure). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * What is wrong with `text` as an allowed origin, or null when it is one: scheme://host[:port] as the Origin header
 * carries it (lower case, no default port), https, or http for localhost, 127.0.0.1 or [::1] only; no path, query,
 * fragment, user or wildcard.
 */
export function originProblem(text: string): string | null {
  const shown = JSON.stringify(text.slice(0, 200));
  if (text.includes('*')) return `origin ${shown}: no wildcards; list each origin (scheme://host[:port])`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `origin ${shown} is no origin: write it as scheme://host[:port], e.g. https://app.example`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `origin ${shown}: the scheme must be https (or http for localhost)`;
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname))
    return `origin ${shown}: http only for localhost, 127.0.0.1 or [::1]; a page on any other host must be served over https`;
  if (url.username || url.password) return `origin ${shown}: no user or password`;
  if (text !== url.origin)
    return `origin ${shown} is not an origin as a browser sends it: write ${JSON.stringify(url.origin)} (scheme://host[:port], lower case, no path, no default port, no trailing slash)`;
  return null;
}

/** What is wrong with a key's list of origins (each one, or their number), or null when it is good. */
export function originsProblem(origins: readonly string[]): string | null {
  for (const origin of origins) {
    const problem = originProblem(origin);
    if (problem) return problem;
  }
  const distinct = new Set(origins).size;
  return distinct > MAX_ALLOWED_ORIGINS ? `at most ${MAX_ALLOWED_ORIGINS} origins per key (${distinct} given)` : null;
}

/** A browser key: one with allowed origins, used in web pages, so public; refused what only a server key may do. */
export const isBrowserKey = (key: { allowedOrigins: readonly string[] }): boolean => key.allowedOrigins.length > 0;
