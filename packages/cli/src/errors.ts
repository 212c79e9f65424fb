/** An error meant for the person at the terminal: its message says what happened and what to do. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
