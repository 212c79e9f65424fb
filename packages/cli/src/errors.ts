/** An error meant for the person at the terminal: its message says what happened and what to do. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** What to say when standard output failed. */
export function standardOutputFailure(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'EPIPE':
      return 'standard output was closed before the end (the program reading it stopped).';
    case 'ENOSPC':
      return 'cannot write standard output: the disk is full. Free some space and run it again.';
    default:
      return `cannot write standard output: ${error.message}`;
  }
}
