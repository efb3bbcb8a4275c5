import { PrivateRouteError } from '../../errors.ts';

/** The transaction was mined but reverted; retrying the same signed transaction cannot help. */
export class TransactionRevertedError extends PrivateRouteError {
  override name = 'TransactionRevertedError';
}

/** The sender's nonce was used by a transaction that is not ours: needs an operator, never an automatic re-sign. */
export class NonceConsumedError extends PrivateRouteError {
  override name = 'NonceConsumedError';
  constructor(
    message: string,
    readonly intentId: number,
  ) {
    super(message);
  }
}

/** The intent can never mine (another transaction of ours used its nonce) and was voided: the step's next try signs anew. */
export class IntentVoidedError extends PrivateRouteError {
  override name = 'IntentVoidedError';
}

/** The sender cannot pay for its transaction; once it is funded the same send goes on. */
export class SenderUnderfundedError extends PrivateRouteError {
  override name = 'SenderUnderfundedError';
}

/** Not mined yet (still waiting, or behind a stuck transaction of the same sender); the next try goes on waiting. */
export class TransactionPendingError extends PrivateRouteError {
  override name = 'TransactionPendingError';
}

/** An operator's void or cancel that does not apply (the transaction may still mine, or it mined). */
export class VoidRefusedError extends PrivateRouteError {
  override name = 'VoidRefusedError';
}

/**
 * A voided intent of a step mined after all while the step has signed anew at another nonce, which could pay a
 * second time: an operator cancels the new one (`routectl void <id> --cancel`); the step then takes the mined one.
 */
export class IntentConflictError extends PrivateRouteError {
  override name = 'IntentConflictError';
}
