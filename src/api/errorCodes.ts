/**
 * The machine-readable `code` of every failure envelope `{ success: false, error, code }`. The list is part of the
 * API: codes are never renamed or reused for another meaning; new ones may be added (clients treat an unknown code
 * like its HTTP status). docs/api.md has the same table.
 */
export const ERROR_CODES = {
  INVALID_JSON: { status: 400, meaning: 'The request body is not valid JSON.' },
  INVALID_REQUEST: { status: 400, meaning: 'The body is not a JSON object, a field is missing or mistyped, or a header or query parameter is malformed.' },
  INVALID_AMOUNT: {
    status: 400,
    meaning:
      "`amount` is no positive decimal within the token's precision and range (`amountSmallestUnits` no positive integer), both or neither were sent, or the amount is outside the pair's limits: too small for the fees or the pool minimum, or above the service's maximum.",
  },
  INVALID_ADDRESS: { status: 400, meaning: '`userDestinationAddress` or `refundAddress` is no checksummed 20-byte address, or is the zero address.' },
  INVALID_WEBHOOK_URL: { status: 400, meaning: '`webhookUrl` is not an acceptable https URL (see docs/api.md, webhookUrl).' },
  WEBHOOK_NEEDS_API_KEY: { status: 400, meaning: "A `webhookUrl` needs an API key (X-Api-Key): deliveries are signed with that key's webhook secret." },
  USER_REFERENCE_NOT_ACCEPTED: {
    status: 400,
    meaning: '`userReference` was sent without an API key, or with one that does not vouch for its users (docs/privacy.md, "Users of one integrator").',
  },
  EXTERNAL_ID_NOT_ACCEPTED: { status: 400, meaning: "`externalId` was sent without an API key: it names a transfer among one key's transfers." },
  INVALID_CURSOR: { status: 400, meaning: "The listing's `cursor` is not a `nextCursor` it gave (cut or changed)." },
  UNSUPPORTED_CHAIN: { status: 400, meaning: 'A chain id is not served by this deployment (see GET /api/bridge/chains), or is the hub chain.' },
  UNSUPPORTED_TOKEN: { status: 400, meaning: 'A token symbol or address is not supported on its chain (see GET /api/bridge/tokens).' },
  AMBIGUOUS_TOKEN: {
    status: 400,
    meaning:
      'A token symbol names more than one token of its chain (e.g. USDC and a bridged USDC): `error` lists them with their addresses; send tokenAddress (destTokenAddress).',
  },
  TOKEN_MISMATCH: { status: 400, meaning: 'tokenSymbol and tokenAddress (or destTokenSymbol and destTokenAddress) name different tokens.' },
  UNSUPPORTED_PAIR: { status: 400, meaning: 'The chains and tokens are each supported but not as this pair (e.g. the same chain on both sides).' },
  NO_ROUTE: { status: 400, meaning: 'The bridge provider cannot serve this transfer (e.g. insufficient liquidity).' },
  UNKNOWN_ROUTE: { status: 404, meaning: 'No transfer has this routeId (a malformed id included).' },
  UNKNOWN_ENDPOINT: { status: 404, meaning: 'No endpoint has this method and path.' },
  STATUS_TOKEN_MISMATCH: { status: 401, meaning: "The statusToken presented is not this transfer's (send none for the public view)." },
  INVALID_API_KEY: { status: 401, meaning: 'The X-Api-Key is unknown, malformed or revoked.' },
  BROWSER_KEY_NOT_ALLOWED: {
    status: 403,
    meaning:
      'The X-Api-Key allows browser origins, so it is public, and may not do this (name a webhookUrl, send a userReference, list or look up its transfers): use a server key without origins (docs/api.md, "Keys in browsers").',
  },
  API_KEY_REQUIRED: { status: 401, meaning: "This endpoint reads an API key's own transfers: send its X-Api-Key." },
  RATE_LIMITED: { status: 429, meaning: 'Too many quotes and creates, or creates, per minute for this client; see Retry-After.' },
  TOO_MANY_UNFUNDED_TRANSFERS: { status: 429, meaning: 'This client has too many transfers awaiting their deposit; see Retry-After.' },
  TOO_MANY_STREAMS: { status: 429, meaning: 'This client has too many open event streams; close one first.' },
  BODY_TOO_LARGE: { status: 413, meaning: 'The request body is larger than 64 KiB.' },
  INVALID_IDEMPOTENCY_KEY: { status: 400, meaning: 'The Idempotency-Key header is not 8 to 255 printable ASCII characters.' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, meaning: 'This Idempotency-Key was used with another request body in the last 24 hours.' },
  QUOTE_EXPIRED: { status: 409, meaning: 'The quoteId is unknown or its quote has expired (expiresAt): quote again, or create without a quoteId.' },
  QUOTE_MISMATCH: { status: 409, meaning: 'The quoteId was quoted for other chains, tokens or another amount than this create asks for.' },
  EXTERNAL_ID_TAKEN: {
    status: 409,
    meaning: 'Another transfer of this API key has this `externalId` (the error names its routeId): find it with GET /api/private-route?externalId=….',
  },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, meaning: 'The first request with this Idempotency-Key is still running; retry after Retry-After.' },
  BRIDGE_UNAVAILABLE: { status: 503, meaning: 'The bridge provider did not answer (or its request quota is used up); retry after Retry-After seconds.' },
  INTERNAL_ERROR: { status: 500, meaning: "Anything else; details are in the service's logs, never in the answer." },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503;

/** A failure the API answers in the envelope; thrown by handlers and middleware, rendered by the app's onError. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: ErrorStatus,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A 400 with its code. */
export const badRequest = (code: ErrorCode, message: string) => new ApiError(400, code, message);
