/**
 * Deprecation notices on answers (docs/api.md, "Versioning and deprecation"): an endpoint, or one of its fields, that is
 * going away is listed in DEPRECATIONS, and every answer of that endpoint then carries
 * - `Deprecation: @<unix seconds>` (RFC 9745): since when it is deprecated;
 * - `Sunset: <HTTP date>` (RFC 8594): from when it may stop answering;
 * - `Link: <docs>; rel="deprecation"`: where the replacement is described.
 * Nothing is deprecated today; the list is how the next removal is announced, at least 90 days before its sunset.
 */
import type { MiddlewareHandler } from 'hono';

export interface Deprecation {
  method: string;
  /** The route as the OpenAPI document writes it, e.g. `/api/private-route/{routeId}`. */
  path: string;
  deprecatedAt: Date;
  sunsetAt: Date;
  /** What replaces it: a page of the docs. */
  link: string;
}

/** What is deprecated in this version. Keep each entry until its sunset has passed and the endpoint is removed. */
export const DEPRECATIONS: readonly Deprecation[] = [];

/** The shortest notice between a deprecation and its sunset. */
export const MIN_SUNSET_NOTICE_DAYS = 90;

/** Whether `pattern` (`{name}` segments match any one segment) matches the request path. */
export function pathMatches(pattern: string, path: string): boolean {
  const want = pattern.split('/');
  const got = path.split('/');
  return want.length === got.length && want.every((segment, i) => (segment.startsWith('{') && segment.endsWith('}') ? got[i] !== '' : segment === got[i]));
}

/** The headers announcing `deprecation`. */
export function deprecationHeaders(deprecation: Deprecation): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(deprecation.deprecatedAt.getTime() / 1000)}`,
    Sunset: deprecation.sunsetAt.toUTCString(),
    Link: `<${deprecation.link}>; rel="deprecation"`,
  };
}

/** A list that breaks the policy (a sunset sooner than the notice) is a programming error: refused at start. */
export function checkDeprecations(list: readonly Deprecation[]): void {
  for (const entry of list) {
    const noticeDays = (entry.sunsetAt.getTime() - entry.deprecatedAt.getTime()) / 86_400_000;
    if (noticeDays < MIN_SUNSET_NOTICE_DAYS)
      throw new Error(`${entry.method} ${entry.path}: its sunset must come at least ${MIN_SUNSET_NOTICE_DAYS} days after its deprecation`);
  }
}

/** Adds the notices of `list` to the answers of the endpoints it names. */
export function announceDeprecations(list: readonly Deprecation[] = DEPRECATIONS): MiddlewareHandler {
  checkDeprecations(list);
  return async (c, next) => {
    await next();
    const entry = list.find((d) => d.method === c.req.method && pathMatches(d.path, c.req.path));
    if (entry) for (const [name, value] of Object.entries(deprecationHeaders(entry))) c.header(name, value);
  };
}
