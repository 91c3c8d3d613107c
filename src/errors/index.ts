// The error module family: what code imports to fail a request.
//   codes.ts       the closed set of codes, the one body (ErrorBody) and its builder
//   app-error.ts   AppError (throw it), notFound, badRequest
//   validation.ts  Ajv's errors -> the body's `details`
//   driver.ts      database driver errors: unique -> 409, foreign key -> 404 (as the route declares), unavailable -> 503
//   handler.ts     the one error handler and the 404 route; sendError for every reply that carries an error
export { ERROR_CODES, ErrorBody, REQUIRED_TEXT, errorBody, type ErrorBodyType, type ErrorCode, type ErrorDetail } from './codes.js';
export { AppError, badRequest, notFound } from './app-error.js';
export { validationDetails } from './validation.js';
export { isDatabaseUnavailable, isForeignKeyViolation, isUniqueViolation } from './driver.js';
export { errorHandler, notFoundHandler, sendError } from './handler.js';
