/**
 * A file the import refuses, with the reason shown to the user in the import
 * report. Thrown by the parsers and mappers; caught per file, so one bad file
 * never stops the others.
 */
export class ImportRejection extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ImportRejection';
  }
}

export const reject = (reason: string): never => {
  throw new ImportRejection(reason);
};
