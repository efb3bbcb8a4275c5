/**
 * Loaded by path (codec.ts failureConverterPath) into the workflow bundle and by the worker: failure messages and
 * stack traces are written as an encoded payload, so the payload codec encrypts them like every other payload.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
