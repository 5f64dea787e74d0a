/** An error with an HTTP status and the details the client is shown. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly details: string[];
  constructor(statusCode: number, message: string, details: string[] = []) {
    super(message);
    this.statusCode = statusCode;
    this.details = details;
  }
}

export const badRequest = (message: string, details: string[]) => new ApiError(400, message, details);
export const notFound = (detail: string) => new ApiError(404, 'Not Found', [detail]);
export const forbidden = (detail: string) => new ApiError(403, 'Forbidden', [detail]);

export interface ErrorBody {
  error: { code: number; message: string; details: string[] };
}

export const errorBody = (code: number, message: string, details: string[]): ErrorBody => ({ error: { code, message, details } });
