/**
 * The one error shape of the service, in the spirit of viem's BaseError: a short message that says what went
 * wrong, optional details (the underlying cause, for logs and operators; never sent to API clients) and what
 * to do next. `message` is the short message followed by what to do, so every place that prints an error
 * already prints the advice.
 *
 *   throw new PrivateRouteError('the signer refused the request', { details: body, fix: 'check SIGNER_AUTH_TOKEN' });
 */
export interface PrivateRouteErrorOptions {
  /** What caused it, in more words; may quote a provider. Kept out of API answers. */
  details?: string;
  /** What the reader can do about it, as an instruction ("set X", "retry after Y"). */
  fix?: string;
  cause?: unknown;
}

export class PrivateRouteError extends Error {
  override name = 'PrivateRouteError';
  readonly shortMessage: string;
  readonly details: string | undefined;
  readonly fix: string | undefined;

  constructor(shortMessage: string, options: PrivateRouteErrorOptions = {}) {
    super(options.fix ? `${shortMessage}: ${options.fix}` : shortMessage, options.cause === undefined ? undefined : { cause: options.cause });
    this.shortMessage = shortMessage;
    this.details = options.details;
    this.fix = options.fix;
  }
}
