/**
 * The failure catalogue: every failure type an activity throws on purpose, or that a workflow branches on, with
 * whether a retry can help and what it means. Workflows match failures by type name, so a name here is a contract:
 * renaming one breaks running workflows' retry policies and branches.
 *
 * Pure (src/domain imports nothing outside src/domain): the workflow bundle imports it for its retry policies
 * (FINAL_TYPES). The Temporal side (failure(), finalFailure(), failureTypeOf) is in src/failures.ts.
 *
 * `retry` says who decides whether it is retried:
 * - 'never': the failure itself is non-retryable (thrown through src/failures.ts `failure()`); a retry cannot change it.
 * - 'policy': thrown by shared code (the transaction sender) whose caller decides: final where a workflow lists it
 *   in its activities' nonRetryableErrorTypes (FINAL_TYPES), retried elsewhere (a step that signs anew may succeed).
 * - 'always': the activity's retry policy tries again (within the step's budget).
 */
export type RetryRule = 'never' | 'policy' | 'always';

export interface FailureSpec {
  retry: RetryRule;
  /** What it means, in one line. */
  meaning: string;
}

export const FAILURES = {
  // Bridge legs.
  BridgeRouteRejected: { retry: 'never', meaning: 'the bridge refused the route as asked (pair, amount, liquidity): a retry asks the same' },
  BridgeRefunded: { retry: 'never', meaning: 'the bridge refunded the order: it is final, the next attempt opens a new order (generation + 1)' },
  BridgeFailed: { retry: 'never', meaning: 'the bridge reports the order failed: it is final, the next attempt opens a new order (generation + 1)' },
  BridgeTooExpensive: { retry: 'always', meaning: 'the order needs more than the route holds (fees moved); a later quote may fit' },
  BridgeFundingMismatch: {
    retry: 'never',
    meaning: 'the recorded funding transfer paid no recorded order of the route: an operator looks at tx_intents and bridge_orders',
  },
  DeliveryMismatch: { retry: 'never', meaning: 'the reported fill did not pay the expected amount to the expected address (or is booked by another route)' },
  CctpBurnMismatch: { retry: 'never', meaning: 'the step already holds a CCTP burn that differs from the request: never re-burn, an operator decides' },
  MintNotFound: { retry: 'never', meaning: 'the burn was minted by another relayer and the mint transaction was not found' },
  // Transactions (src/chain/txSender.ts).
  TransactionRevertedError: { retry: 'policy', meaning: 'a transaction was mined but reverted; resending the same signed transaction cannot help' },
  NonceConsumedError: { retry: 'policy', meaning: "the sender's nonce was used by a transaction that is not ours: an operator, never an automatic re-sign" },
  // Pool and privacy.
  HubBalanceShort: { retry: 'always', meaning: 'the hub account holds less than the pool deposit needs yet' },
  AwaitingFinality: { retry: 'always', meaning: 'the pool deposit is not yet CHAIN_CONFIRMATIONS blocks deep: the note is recorded once it is' },
  PoolNoteMissing: { retry: 'never', meaning: 'the route has no note in the pool' },
  AspRejected: { retry: 'never', meaning: 'the ASP rejected the pool deposit; `fail` ragequits the note back to the hub account' },
  AspReviewTimeout: { retry: 'never', meaning: 'the ASP has not approved the deposit within the review timeout; `retry` waits again' },
  // Plans, refunds, operators.
  PlanNotRecorded: { retry: 'never', meaning: "a step's plan is not the transfer the API recorded (or runs in another workflow): nothing moved" },
  NothingToRefund: { retry: 'never', meaning: 'the deposit address holds nothing to refund' },
  RefundBelowMinimum: { retry: 'never', meaning: 'the deposit is below REFUND_MIN_AMOUNT: the gas would cost more than it returns' },
  RouteSendPending: { retry: 'never', meaning: 'the account has unmined sends that may still move its funds: wait or void them first' },
  RefundFailed: { retry: 'never', meaning: 'a refund gave up after its attempts; the route is flagged for an operator' },
  UnknownRoute: { retry: 'never', meaning: 'no transfer has this route id' },
  RouteNotFailed: { retry: 'never', meaning: 'the route has not failed, so it cannot be recovered' },
  RecoverReverted: { retry: 'never', meaning: 'a recovery send reverted; nothing moved' },
  RecoveryFailed: { retry: 'never', meaning: 'a recovery stopped after its attempts' },
  VoidRefused: { retry: 'never', meaning: "an operator's void or cancel does not apply (the transaction may still mine, or it mined)" },
  VoidFailed: { retry: 'never', meaning: 'a void stopped after its attempts' },
  OperatorActionRefused: { retry: 'never', meaning: "an operator action's audit row does not match the request, or has ended" },
  SignerRefused: {
    retry: 'never',
    meaning: "the signer's spending policy refused the signature or the note secrets (docs/security.md): an operator reads the signer's audit log",
  },
  // Webhooks (activities/webhooks.ts).
  WebhookUnknown: { retry: 'never', meaning: 'no such webhook delivery' },
  WebhookRefused: { retry: 'never', meaning: 'the route has no webhook URL, or its URL is not one the service calls' },
  WebhookRejected: { retry: 'never', meaning: 'the receiver answered the delivery with a 4xx (other than 408 and 429)' },
  WebhookUnanswered: { retry: 'always', meaning: 'the receiver could not be reached or timed out' },
  WebhookNotAccepted: { retry: 'always', meaning: 'the receiver answered with a 5xx, 408 or 429' },
  WebhookNotConfigured: { retry: 'never', meaning: 'the worker has no webhook settings (WEBHOOK_SIGNING_SECRET)' },
  // Providers, as the activity interceptor names them (src/temporal/activityErrors.ts): retried by the step's policy.
  BridgeUnavailable: { retry: 'always', meaning: 'the bridge provider (Relay, Iris) could not be reached, failed or throttled us' },
  AspUnavailable: { retry: 'always', meaning: 'the ASP could not be reached, failed, throttled us or answered with what we cannot read' },
  ProverFailed: { retry: 'always', meaning: 'the prover could not prove (or its artifacts were refused)' },
  ProofInvalid: {
    retry: 'always',
    meaning: 'a proof did not verify against the circuit and was dropped before any transaction; the next attempt proves afresh',
  },
  RpcFailed: { retry: 'always', meaning: 'a chain RPC call failed (node unreachable, timeout, or an error answer)' },
} as const satisfies Record<string, FailureSpec>;

export type FailureType = keyof typeof FAILURES;

export const isFailureType = (type: string | null | undefined): type is FailureType => typeof type === 'string' && Object.hasOwn(FAILURES, type);

/**
 * The failure types each workflow's money-moving activities never retry (their nonRetryableErrorTypes). Each list is
 * exactly the one its workflow issued before the catalogue existed (in that order): retry policies are part of the
 * recorded commands.
 */
export const FINAL_TYPES = {
  /** transferWorkflow (v1) and transferWorkflowV2: a step failing this way parks the route at once. */
  transferStep: ['BridgeRouteRejected', 'BridgeRefunded', 'BridgeFailed', 'DeliveryMismatch', 'TransactionRevertedError', 'NonceConsumedError'],
  /** refundWorkflow. */
  refund: [
    'NothingToRefund',
    'RefundBelowMinimum',
    'UnknownRoute',
    'RouteSendPending',
    'OperatorActionRefused',
    'TransactionRevertedError',
    'NonceConsumedError',
  ],
  /** recoverWorkflow and voidIntentWorkflow. */
  operator: ['UnknownRoute', 'RouteNotFailed', 'VoidRefused', 'OperatorActionRefused', 'TransactionRevertedError', 'NonceConsumedError'],
} as const satisfies Record<string, readonly FailureType[]>;

/** A list of FINAL_TYPES as the SDK's retry policy takes it (a fresh, mutable array). */
export const finalTypes = (of: keyof typeof FINAL_TYPES): string[] => [...FINAL_TYPES[of]];
