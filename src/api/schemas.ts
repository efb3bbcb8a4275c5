/**
 * The API's zod schemas: the requests they validate (their messages are the 400s' `error` text) and the answers
 * they describe. OpenAPI 3.1 (GET /openapi.json) is generated from these same objects, so the document and the
 * validation cannot drift apart.
 */
import { z } from '@hono/zod-openapi';
import { isAddress, zeroAddress } from 'viem';
import { TRANSFER_STATUSES } from '../domain/status.ts';
import { FAILURE_CODES } from '../domain/failureCodes.ts';
import { QUOTE_ID_PATTERN } from '../quote/quoteRecords.ts';

/** A partner's opaque id of its own user (docs/privacy.md, "Users of one integrator"). */
const USER_REFERENCE_PATTERN = /^[\x21-\x7e]{1,128}$/;
import { webhookUrlProblem } from '../webhooks/webhookUrl.ts';
/** A partner's own reference for one of its transfers (create's externalId): printable ASCII, spaces included. */
const EXTERNAL_ID_PATTERN = /^[\x20-\x7e]{1,128}$/;
const EXTERNAL_ID_RULE = 'externalId must be 1 to 128 printable ASCII characters (e.g. your own order id)';
import { ERROR_CODE_LIST } from './errorCodes.ts';

export { webhookUrlProblem };

const chainId = (field: string) =>
  z
    .number({ error: `${field} must be a number` })
    // First, so that 2^53 and beyond are called too large rather than not an integer.
    .max(Number.MAX_SAFE_INTEGER, `${field} is too large (at most ${Number.MAX_SAFE_INTEGER}); see GET /api/bridge/chains for the supported chains`)
    .int(`${field} must be an integer`)
    .positive(`${field} must be positive`);

const symbol = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(32, `${field} is too long`);

/** A token's contract address: 20-byte hex, EIP-55 checksum when mixed-case (the zero address may name a native currency). */
const tokenAddress = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .refine((value) => isAddress(value, { strict: true }), `${field} must be a 0x-prefixed 20-byte hex address (with a valid checksum when mixed-case)`);

export const transferRequestSchema = z
  .object({
    sourceChainId: chainId('sourceChainId').openapi({ description: 'Chain the sender deposits from (GET /api/bridge/chains).', example: 8453 }),
    destChainId: chainId('destChainId').openapi({ description: 'Chain the recipient is paid on.', example: 42161 }),
    amount: z
      .string({ error: 'amount must be a string with a decimal number of source tokens, e.g. "12.5"' })
      .max(80, 'amount is too long')
      .optional()
      .openapi({
        description:
          'Decimal amount in whole source tokens (not smallest units), as a string: no sign, exponent or separators; at most the token\'s decimals. Exactly one of amount and amountSmallestUnits (docs/api.md, "Amounts").',
        example: '12.5',
      }),
    amountSmallestUnits: z
      .string({ error: 'amountSmallestUnits must be a string with an integer number of smallest units, e.g. "12500000"' })
      .max(80, 'amountSmallestUnits is too long')
      .optional()
      .openapi({
        description:
          'Addition to the spec. The amount as an integer string in the source token\'s smallest units ("12500000" is 12.5 of a 6-decimal token), instead of amount: sending both is 400 INVALID_AMOUNT.',
      }),
    tokenSymbol: symbol('tokenSymbol').optional().openapi({
      description:
        'Source token symbol (case-insensitive); default USDC unless tokenAddress is given. A symbol that names two tokens of the chain is 400 AMBIGUOUS_TOKEN: send tokenAddress.',
      example: 'USDC',
    }),
    destTokenSymbol: symbol('destTokenSymbol')
      .optional()
      .openapi({ description: "Destination token symbol; default the source token's symbol unless destTokenAddress is given.", example: 'USDC' }),
    tokenAddress: tokenAddress('tokenAddress').optional().openapi({
      description:
        'Addition to the spec. The source token by its contract address on the source chain (GET /api/bridge/tokens), instead of or with tokenSymbol (both must name the same token: else 400 TOKEN_MISMATCH). Unknown there: 400 UNSUPPORTED_TOKEN.',
    }),
    destTokenAddress: tokenAddress('destTokenAddress').optional().openapi({
      description: 'Addition to the spec. The destination token by its contract address on the destination chain, instead of or with destTokenSymbol.',
    }),
  })
  .openapi('TransferRequest', { description: 'What to quote. Unknown fields are ignored.' });

const evmAddress = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .refine((value) => isAddress(value, { strict: true }), `${field} must be a 0x-prefixed 20-byte hex address (with a valid checksum when mixed-case)`)
    .refine((value) => value.toLowerCase() !== zeroAddress, `${field} must not be the zero address`)
    .transform((value) => value as `0x${string}`);

/** The create body; `allowHttpWebhooks` (WEBHOOK_ALLOW_HTTP) accepts http webhook URLs to any host. */
export function createTransferSchemaWith(options: { allowHttpWebhooks: boolean }) {
  return transferRequestSchema
    .extend({
      userDestinationAddress: evmAddress('userDestinationAddress').openapi({
        description: 'Where the recipient is paid, on the destination chain: 20-byte hex, EIP-55 checksum when mixed-case, not the zero address.',
        example: '0x000000000000000000000000000000000000bEEF',
      }),
      /** Addition to the spec: where undeliverable deposits go back to, on the source chain. */
      refundAddress: evmAddress('refundAddress').optional().openapi({
        description:
          'Addition to the spec. Source-chain address that undeliverable deposits are refunded to; without it they are held for an operator. Must differ from userDestinationAddress (400 INVALID_ADDRESS).',
      }),
      /** Addition to the spec: wait for at least this anonymity set in the pool (bounded by PRIVACY_MAX_ANONYMITY_SET). */
      minAnonymitySet: z
        .number({ error: 'minAnonymitySet must be a number' })
        .int('minAnonymitySet must be an integer')
        .positive('minAnonymitySet must be positive')
        .optional()
        .openapi({
          description: "Addition to the spec. Anonymity set to wait for in the privacy pool (at least the service's, at most PRIVACY_MAX_ANONYMITY_SET).",
        }),
      userReference: z
        .string({ error: 'userReference must be a string' })
        .regex(USER_REFERENCE_PATTERN, 'userReference must be 1 to 128 printable ASCII characters without spaces (e.g. your own user id, hashed or not)')
        .optional()
        .openapi({
          description:
            'Addition to the spec. With an API key that vouches for its users (operators: routectl apikey vouch): an opaque id of the wallet\'s own user, so that transfers of different users count as different clients in each other\'s anonymity sets (docs/privacy.md, "Users of one integrator"). Only its keyed hash is stored. Without such a key: 400 USER_REFERENCE_NOT_ACCEPTED.',
          example: 'user-5f0c2a',
        }),
      quoteId: z
        .string({ error: 'quoteId must be a string' })
        .regex(QUOTE_ID_PATTERN, 'quoteId must be the quoteId of a quote answer: qt_ + 32 hex characters')
        .optional()
        .openapi({
          description:
            'Addition to the spec. Create with exactly this quote (same chains, tokens and amount) while it is fresh: 409 QUOTE_EXPIRED after its expiresAt, 409 QUOTE_MISMATCH for another request. Without it the create is priced afresh.',
          example: 'qt_0123456789abcdef0123456789abcdef',
        }),
      externalId: z.string({ error: 'externalId must be a string' }).regex(EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE).optional().openapi({
        description:
          "Addition to the spec. With an API key only (without one: 400 EXTERNAL_ID_NOT_ACCEPTED): your own reference for this transfer (e.g. your order id), unique among the key's transfers (another create with it: 409 EXTERNAL_ID_TAKEN, unless it replays the same Idempotency-Key). Find the transfer by it: GET /api/private-route?externalId=….",
        example: 'order-2291',
      }),
      webhookUrl: z
        .string({ error: 'webhookUrl must be a string' })
        .superRefine((value, ctx) => {
          const problem = webhookUrlProblem(value, options.allowHttpWebhooks);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional()
        .openapi({
          description:
            'Addition to the spec. https URL that receives a signed POST at every status change (http only for localhost); at most 2048 characters, no credentials in it.',
          example: 'https://partner.example/hooks/private-route',
        }),
    })
    .superRefine((request, ctx) => {
      // Refunds leave on the source side, payouts on the destination: one address on both ends would link them.
      if (request.refundAddress !== undefined && request.refundAddress.toLowerCase() === request.userDestinationAddress.toLowerCase()) {
        ctx.addIssue({
          code: 'custom',
          path: ['refundAddress'],
          message:
            'refundAddress must differ from userDestinationAddress: a refund to the recipient would link the deposit to the payout; give an address of the sending side, or none',
        });
      }
    })
    .openapi('CreateTransferRequest');
}

export const createTransferSchema = createTransferSchemaWith({ allowHttpWebhooks: false });

export const tokensQuerySchema = z.object({
  chainId: z
    .string({ error: 'chainId query parameter is required' })
    .regex(/^[1-9]\d{0,15}$/, 'chainId must be a positive integer')
    .transform(Number)
    .refine((value) => Number.isSafeInteger(value), 'chainId is too large (at most 9007199254740991)')
    .openapi({ param: { name: 'chainId', in: 'query' }, type: 'string', description: 'Chain whose tokens to list.', example: '8453' }),
  search: z
    .string()
    .max(64, 'search is too long')
    .optional()
    .openapi({ description: "Case-insensitive part of a symbol or name, or a token's whole address.", example: 'usd' }),
});

/** At most this many transfers on a page of GET /api/private-route. */
export const MAX_PAGE_LIMIT = 100;
export const DEFAULT_PAGE_LIMIT = 20;

/** GET /api/private-route: the filters and the page (a partner's own transfers only). */
export const listTransfersQuerySchema = z.object({
  status: z
    .enum(TRANSFER_STATUSES, { error: `status must be one of ${TRANSFER_STATUSES.join(', ')}` })
    .optional()
    .openapi({ param: { name: 'status', in: 'query' }, description: 'Only transfers in this status.', example: 'COMPLETED' }),
  externalId: z
    .string()
    .regex(EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE)
    .optional()
    .openapi({ param: { name: 'externalId', in: 'query' }, description: 'The transfer created with this externalId (at most one).', example: 'order-2291' }),
  depositTxHash: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'depositTxHash must be a transaction hash: 0x and 64 hex characters')
    .optional()
    .openapi({
      param: { name: 'depositTxHash', in: 'query' },
      description: 'The transfer whose deposit address received a deposit in this transaction (source chain).',
    }),
  depositAddress: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'depositAddress must be an address: 0x and 40 hex characters')
    .optional()
    .openapi({ param: { name: 'depositAddress', in: 'query' }, description: 'The transfer with this deposit address (any case).' }),
  cursor: z
    .string()
    .max(128, 'cursor is not a nextCursor of this listing')
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' }, description: "The previous page's nextCursor, as given; none for the first page." }),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_PAGE_LIMIT, `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}`)
    .optional()
    .openapi({
      param: { name: 'limit', in: 'query' },
      type: 'string',
      description: `Transfers per page, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}).`,
      example: '20',
    }),
});

export const routeIdParamsSchema = z.object({
  routeId: z.string().openapi({
    param: { name: 'routeId', in: 'path' },
    description: '`rt_` + 32 hex characters; a malformed id answers 404.',
    example: 'rt_0123456789abcdef0123456789abcdef',
  }),
});

// ---- headers (documented as parameters; checked by the handlers, so typed clients need not send them) -------

/** Idempotency-Key on create: printable ASCII without spaces, 8 to 255 characters. */
export { IDEMPOTENCY_KEY_PATTERN as IDEMPOTENCY_KEY_RULE } from '../transfers/idempotency.ts';

const headerParameter = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'header' as const,
  required: false,
  description,
  schema,
});

const headerParameterRequired = (name: string, description: string) => ({ ...headerParameter(name, description), required: true });

export const headerParameters = {
  requiredApiKey: headerParameterRequired('X-Api-Key', "The partner's API key (`prk_…`): only its own transfers are read. Without one: 401 API_KEY_REQUIRED."),
  apiKey: headerParameter(
    'X-Api-Key',
    "Partner API key (`prk_…`): the request counts against the key's limits instead of the caller's address. Unknown or revoked: 401 INVALID_API_KEY.",
  ),
  idempotencyKey: headerParameter(
    'Idempotency-Key',
    'Makes a retried create safe: the same key with the same body within 24 h answers the first answer again (with `Idempotent-Replayed: true`) instead of creating a second transfer; with another body: 409 IDEMPOTENCY_KEY_REUSED; while the first is still running: 409 IDEMPOTENCY_KEY_IN_USE. Scoped to the X-Api-Key (or to all callers without one). Use a random UUID.',
    { type: 'string', minLength: 8, maxLength: 255, pattern: '^[\\x21-\\x7e]{8,255}$', example: '7f3c6a52-0d5e-4c62-9d7e-2b8f0f1c9a11' },
  ),
  statusToken: headerParameter(
    'X-Status-Token',
    "The transfer's statusToken, when Authorization carries something else (wins when both are sent). The same as `Authorization: Bearer <statusToken>`.",
  ),
  lastEventId: headerParameter('Last-Event-ID', 'Resume: the id (statusSeq) of the last event received; only later changes are sent.'),
};

export const responseHeaders = {
  retryAfter: { 'Retry-After': { description: 'Whole seconds to wait before retrying.', schema: { type: 'integer' as const } } },
  rateLimit: {
    'RateLimit-Limit': { description: 'Quotes and creates allowed per minute for this client.', schema: { type: 'integer' as const } },
    'RateLimit-Remaining': { description: 'What is left of it in this window.', schema: { type: 'integer' as const } },
    'RateLimit-Reset': { description: 'Seconds until the window ends.', schema: { type: 'integer' as const } },
  },
  replayed: {
    'Idempotent-Replayed': {
      description: '`true` when this is the stored answer of an earlier create with the same Idempotency-Key.',
      schema: { type: 'string' as const, enum: ['true'] },
    },
  },
  wwwAuthenticate: { 'WWW-Authenticate': { description: '`Bearer`', schema: { type: 'string' as const } } },
};

// ---- answers ---------------------------------------------------------------------------------------------

const smallestUnits = (what: string) =>
  z
    .string()
    .regex(/^\d+$/)
    .openapi({ description: `${what}, integer string in smallest units.`, example: '12500000' });
const usd = (what: string) =>
  z
    .number()
    .nullable()
    .openapi({ description: `${what} in USD, rounded down to the cent; null when unpriced.` });
const statusSchema = z.enum(TRANSFER_STATUSES).openapi('TransferStatus', {
  description: 'AWAITING_DEPOSIT → BRIDGING_IN → RECEIVED_ON_HUB → SHIELDED → UNSHIELD_SENT → BRIDGING_OUT → COMPLETED; FAILED from any active status.',
});
const hexAddress = (description: string) => z.string().openapi({ description, example: '0x4B0897b0513fdC7C541B6d9D7E929C4e5364D2dB' });
const txHash = (description: string) => z.string().nullable().openapi({ description, example: null });

const quotedTokenSchema = (side: string) =>
  z
    .object({
      chainId: z.number().int(),
      address: hexAddress(`The ${side} token's contract address on its chain.`),
      symbol: z.string().openapi({ example: 'USDC' }),
      decimals: z.number().int().openapi({ description: 'Its amounts in this answer are in units of 10^-decimals of a token.', example: 6 }),
    })
    .openapi({ description: `Addition to the spec. The ${side} token (a symbol may name two tokens of a chain; the address names one).` });

const amountSuggestionSchema = z
  .object({
    amount: z.string().openapi({ description: 'Input to send instead, decimal in whole source tokens like the request’s amount.', example: '101.37' }),
    quotedOutputAmount: smallestUnits('The class it pays (the smallest input that reaches it, so almost nothing is lost to rounding)'),
    paidLast24h: z.number().int().openapi({ description: 'Transfers of that class the service paid out in the last 24 hours.' }),
  })
  .openapi('AmountSuggestion');

const amountClassSchema = z
  .object({
    value: smallestUnits('The payout’s amount class, a value of the public grid (docs/privacy.md): equal to quotedOutputAmount'),
    roundingBps: z.number().int().openapi({ description: 'roundingAmount in whole basis points of the output before rounding, rounded down (0 to 99).' }),
    priceHeldUntil: z
      .string()
      .nullable()
      .openapi({ format: 'date-time', description: 'When the held prices of the cross-asset conversions are due to change; null when nothing is converted.' }),
    paidLast24h: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'Quotes only: transfers of this class the service paid out in the last 24 hours (public on chain).' }),
    suggestions: z
      .array(amountSuggestionSchema)
      .optional()
      .openapi({ description: 'Quotes only: up to three inputs without rounding cost, or whose class is busier.' }),
  })
  .openapi('AmountClass', { description: 'Addition to the spec (docs/api.md, "Amount classes").' });

export const quoteSchema = z
  .object({
    quoteId: z.string().optional().openapi({
      description: 'Addition to the spec. Quotes only: cite it in the create (quoteId) to get exactly this quote until expiresAt.',
      example: 'qt_0123456789abcdef0123456789abcdef',
    }),
    expiresAt: z.string().optional().openapi({
      format: 'date-time',
      description: 'Addition to the spec. Quotes only: until when a create may cite quoteId (QUOTE_TTL_SECONDS, never past priceHeldUntil).',
    }),
    minAmount: smallestUnits(
      'Addition to the spec. Quotes only: the smallest input this pair pays anything for at current prices (source token); null where it cannot be computed',
    )
      .nullable()
      .optional(),
    maxAmount: smallestUnits("Addition to the spec. Quotes only: the service's largest input for this pair (source token); null without a maximum")
      .nullable()
      .optional(),
    symbol: z.string().openapi({ description: 'Source token symbol.', example: 'USDC' }),
    destSymbol: z.string().openapi({ description: 'Destination token symbol.', example: 'USDC' }),
    sourceToken: quotedTokenSchema('source'),
    destToken: quotedTokenSchema('destination'),
    sourceChainId: z.number().int(),
    destChainId: z.number().int(),
    hubChainId: z.number().int().openapi({ description: 'The hub chain every transfer passes through.' }),
    amount: smallestUnits('Input amount (source token)'),
    quotedOutputAmount: smallestUnits('Guaranteed output, net of every fee (destination token)'),
    feeAmount: smallestUnits('Service fee (destination token)'),
    networkCostAmount: smallestUnits(
      "Addition to the spec. The part of feeAmount that pays the service's own gas for this route at the chains' current fees (destination token): the fee is at least the minimum plus this",
    ),
    bridgeFeeAmount: smallestUnits('Destination bridge fee in burn-and-mint mode; "0" in deposit-address mode'),
    privacyFeeAmount: smallestUnits('Privacy-pool fees in burn-and-mint mode; "0" in deposit-address mode'),
    amountInUsd: usd('amount'),
    quotedOutputUsd: usd('quotedOutputAmount'),
    feeUsd: usd('feeAmount'),
    networkCostUsd: usd('networkCostAmount'),
    bridgeFeeUsd: usd('bridgeFeeAmount'),
    privacyFeeUsd: usd('privacyFeeAmount'),
    partnerFeeAmount: smallestUnits(
      'Addition to the spec. The fee of the partner whose X-Api-Key asked (its bps of the output after the service\'s fee, rounded up), destination token; "0" without one',
    ).optional(),
    partnerFeeUsd: usd('partnerFeeAmount').optional(),
    partnerFeeBps: z.number().int().optional().openapi({ description: "Addition to the spec. The partner fee's basis points (0 without a partner fee)." }),
    roundingAmount: smallestUnits('Addition to the spec. What rounding the output down to its amount class cost (destination token)'),
    roundingUsd: usd('roundingAmount'),
    etaSeconds: z.number().openapi({ description: 'Rough end-to-end estimate.' }),
    route: z.array(z.string()).openapi({ description: 'Display hops.', example: ['USDC on Base', 'USDC on hub', 'privacy pool', 'USDC on Arbitrum'] }),
    amountClass: amountClassSchema,
  })
  .openapi('Quote');

const createdFields = {
  routeId: z.string().openapi({ description: 'Tracks the transfer: `rt_` + 32 hex characters.', example: 'rt_0123456789abcdef0123456789abcdef' }),
  depositAddress: hexAddress('Send the source token here, on the source chain.'),
  depositTokenAddress: hexAddress("Addition to the spec. The source token's contract: only a deposit of this contract funds the transfer."),
  hubAccount: hexAddress('Account on the hub chain that receives the bridged funds.'),
  hubIsSmartAccount: z.boolean(),
  status: statusSchema,
  minAnonymitySet: z.number().int().openapi({ description: 'Addition to the spec. The anonymity set the transfer waits for in the pool.' }),
  externalId: z
    .string()
    .nullable()
    .openapi({ description: "Addition to the spec. The creating API key's own reference (create's externalId); null when none was given." }),
};

export const newTransferSchema = quoteSchema
  .extend({
    ...createdFields,
    statusToken: z.string().openapi({
      description: 'Addition to the spec. `st_` + 43 base64url characters, handed out this once: present it to GET (Authorization: Bearer) for the full view.',
      example: 'st_Xq3v0dY1nU5b0w6lW9QJf8k2sCq7mZrT4aHy1eGx0pE',
    }),
  })
  .openapi('NewTransfer');

export const privacyReportSchema = z
  .object({
    anonymitySet: z.number().int().openapi({
      description:
        'Its own note plus the peers of its amount class an observer cannot tell its withdrawal apart from, one per client (docs/privacy.md); lower later if a counted peer ragequits.',
    }),
    waitedSeconds: z.number().int().openapi({ description: 'Seconds between its deposit into the pool and its withdrawal.' }),
    leftAtMaxWait: z.boolean().openapi({ description: 'It left after PRIVACY_MAX_WAIT_SECONDS with fewer than minAnonymitySet.' }),
  })
  .openapi('PrivacyReport');

export const failureCodeSchema = z.enum(FAILURE_CODES).nullable().openapi('FailureCode', {
  description:
    'Why a FAILED transfer failed, a stable code to branch on (docs/api.md, "Outcomes"); null unless FAILED. `error` says it in words, which may change.',
});

export const refundSchema = z
  .object({
    status: z.enum(['CONFIRMED']).openapi({ description: 'Its transaction was mined; a refund still waiting its delay or in flight does not show yet.' }),
    amount: smallestUnits('What went back, in the refunded token'),
    token: hexAddress("The token contract refunded: the route's source token, or another token sent to the deposit address."),
    symbol: z.string().nullable().openapi({ description: "The source token's symbol; null for another token." }),
    chainId: z.number().int().openapi({ description: 'The chain it was sent on (the source chain).' }),
    txHash: z.string().openapi({ description: "The refund's transaction." }),
    explorerUrl: z.string().nullable().openapi({ description: "The transaction's explorer page; null where the chain has no known explorer." }),
  })
  .openapi('Refund', { description: 'A refund sent from the deposit address (docs/api.md, "Outcomes").' });

export const transferViewSchema = quoteSchema
  .extend({
    roundingAmount: smallestUnits('What rounding the output to its amount class cost; null for transfers created before amount classes').nullable(),
    networkCostAmount: smallestUnits("The part of feeAmount that pays the service's own gas; null for transfers quoted before it did").nullable(),
    amountClass: z
      .object({ value: smallestUnits('The payout’s amount class'), roundingBps: z.number().int() })
      .nullable()
      .openapi({ description: 'null for transfers created before amount classes.' }),
    ...createdFields,
    error: z.string().nullable().openapi({ description: "The recorded cause once FAILED (or a refund's note); null otherwise." }),
    failureCode: failureCodeSchema,
    depositedAmount: smallestUnits(
      'Addition to the spec. What the deposit address received of the source token ("0": nothing), so a short deposit shows what arrived',
    ),
    refunds: z.array(refundSchema).openapi({ description: 'Addition to the spec. Every refund sent from the deposit address, oldest first.' }),
    refund: refundSchema.nullable().openapi({ description: 'Addition to the spec. The latest of `refunds`; null when there is none.' }),
    needsAttention: z.boolean().openapi({ description: 'True while the transfer waits for an operator.' }),
    userDestinationAddress: hexAddress('The recipient.'),
    refundAddress: hexAddress('Where undeliverable deposits are refunded; null when none was given.').nullable(),
    depositDeadline: z.string().openapi({ description: 'ISO 8601; a deposit after it is refunded or held.', format: 'date-time' }),
    depositTxHash: txHash("The sender's deposit into depositAddress, on the source chain; null until seen."),
    bridgeInTxHash: txHash(
      "The deposit account's send into the bridge (the payment to Relay, or the CCTP burn) that carries the deposit to hubAccount, on the source chain; null until sent.",
    ),
    payoutTxHash: txHash('The payment to the recipient, on the destination chain; null until paid.'),
    createdAt: z.string().openapi({ format: 'date-time' }),
    updatedAt: z.string().openapi({ format: 'date-time' }),
    completedAt: z.string().nullable().openapi({ format: 'date-time' }),
    explorerLinks: z
      .object({
        depositTx: z.string().nullable(),
        bridgeInTx: z.string().nullable(),
        payoutTx: z.string().nullable(),
      })
      .openapi({
        description:
          'The explorer page of each transaction hash the view returns (depositTxHash and bridgeInTxHash on the source chain, payoutTxHash on the destination); null until the hash is known or where the chain has no known explorer.',
      }),
    statusHistory: z
      .array(
        z.object({
          status: statusSchema,
          at: z.string().openapi({ format: 'date-time' }),
          txHash: txHash(
            "The transaction that brought the transfer to this status, where the view names one: the deposit (BRIDGING_IN), the deposit account's send into the bridge (RECEIVED_ON_HUB), the payment (COMPLETED).",
          ),
          chainId: z.number().int().nullable().openapi({ description: 'The chain txHash is on; null without a txHash.' }),
        }),
      )
      .openapi({ description: 'Every status the transfer reached, oldest first, starting with AWAITING_DEPOSIT at creation.' }),
    privacy: privacyReportSchema.nullable().openapi({ description: 'null until the transfer has left the privacy pool.' }),
  })
  .openapi('TransferView', { description: "The full view, for the holder of the transfer's statusToken." });

export const transferPageSchema = z
  .object({
    items: z.array(transferViewSchema).openapi({ description: "The key's transfers that match, newest first: each the full view (no statusToken)." }),
    nextCursor: z
      .string()
      .nullable()
      .openapi({ description: 'Pass it as `cursor` for the next page; null on the last page.', example: 'djF8MjAyNi0xMS0yOVQxMToyNTowMC4xMjM0NTZafHJ0XzAx' }),
  })
  .openapi('TransferPage');

export const reissuedStatusTokenSchema = z
  .object({
    routeId: z.string(),
    statusToken: z.string().openapi({
      description: 'The new statusToken, handed out this once; the previous one no longer opens the transfer.',
      example: 'st_Xq3v0dY1nU5b0w6lW9QJf8k2sCq7mZrT4aHy1eGx0pE',
    }),
  })
  .openapi('ReissuedStatusToken');

export const publicTransferViewSchema = z
  .object({
    routeId: z.string(),
    status: statusSchema,
    error: z.string().nullable().openapi({ description: 'The recorded cause with addresses, hashes, amounts and times shown as `…`.' }),
    needsAttention: z.boolean(),
  })
  .openapi('PublicTransferView', { description: 'What anyone holding the routeId sees without its statusToken.' });

export const chainSchema = z
  .object({
    chainId: z.number().int(),
    name: z.string(),
    displayName: z.string(),
    logoUrl: z.string().optional(),
    vmType: z.string().optional(),
    explorerUrl: z
      .string()
      .nullable()
      .openapi({ description: "The chain's block explorer; a transaction's page is `<explorerUrl>/tx/<hash>`. null where none is known (the local chains)." }),
    nativeCurrency: z
      .object({ symbol: z.string(), decimals: z.number().int() })
      .nullable()
      .openapi({ description: 'The currency gas is paid in on this chain; null where the provider and the network profile name none.' }),
  })
  .openapi('Chain');

export const tokenSchema = z
  .object({
    chainId: z.number().int(),
    address: z.string(),
    symbol: z.string(),
    name: z.string(),
    decimals: z.number().int(),
    logoUrl: z.string().optional(),
  })
  .openapi('Token');

export const errorCodeSchema = z.enum(ERROR_CODE_LIST).openapi('ErrorCode', { description: 'Stable machine-readable failure code (docs/api.md, Errors).' });

export const errorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.string().openapi({ description: 'What is wrong, for a person; its words may change.' }),
    code: errorCodeSchema,
  })
  .openapi('Error');

export const okEnvelope = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

/** "field: problem" for the first issue, the way every 400 names what is wrong. */
export function describeZodError(error: z.ZodError, input: Record<string, unknown>): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request';
  const path = issue.path.join('.');
  const field = issue.path[0];
  if (issue.code === 'invalid_type' && typeof field === 'string' && input[field] === undefined) return `${path} is required`;
  return issue.message.startsWith(path) || !path ? issue.message : `${path}: ${issue.message}`;
}
