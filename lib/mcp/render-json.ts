/** A tool result's JSON as its text content shows it: indented, or the text itself when the body is not JSON. */
export const renderJson = (body: unknown): string => (typeof body === 'string' ? body : JSON.stringify(body, null, 2));
