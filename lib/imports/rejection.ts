/**
 * A file the import refuses, with the reason shown to the user in the import
 * report. Thrown by the parsers and mappers; caught per file, so one bad file
 * never stops the others.
 */
export class ImportRejection extends Error {
  readonly reason: string;
  constructor(reason: string) {
    // A reason echoes values read from the file (see `shown`); whatever one holds, the report stays bounded.
    const bounded = reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS - 1)}…` : reason;
    super(bounded);
    this.reason = bounded;
    this.name = 'ImportRejection';
  }
}

/** The longest reason a file's rejection gives. */
export const MAX_REASON_CHARS = 300;

/** A value read from the file as a reason quotes it: its first 40 characters, then "…". */
export const shown = (value: string): string => (value.length > 40 ? `${value.slice(0, 40)}…` : value);

export const reject = (reason: string): never => {
  throw new ImportRejection(reason);
};
