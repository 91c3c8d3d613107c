import { ERROR_CODES, type ErrorCode, type ErrorDetail } from './codes.js';

/** What code throws to answer an error: its status follows from the code. */
export class AppError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = ERROR_CODES[code];
  }
}

export const notFound = (kind: string) => new AppError('NOT_FOUND', `${kind} not found.`);

export function badRequest(details: ErrorDetail[], message = 'The request is invalid.'): AppError {
  return new AppError('BAD_REQUEST', message, details);
}
