import { PrivateRouteError } from '../../../errors.ts';

/** The pool will not let this note out: it was spent by a transaction this service has no record of. */
export class PoolNoteSpentError extends PrivateRouteError {
  override name = 'PoolNoteSpentError';
}

/** The ASP's published leaves do not match the root on chain yet; retry shortly. */
export class AspOutOfSyncError extends PrivateRouteError {
  override name = 'AspOutOfSyncError';
}
