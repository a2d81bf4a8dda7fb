/** What gasoline's entry in a client's config says: the server's name and how to start it. */
export const SERVER_NAME = 'gasoline';

export interface ServerEntry {
  /** absolute path of the installed bin/gasoline, so the client may start it from any directory */
  command: string;
  args: string[];
}

/** A config file we will not rewrite as it is; the message says what to do instead. */
export class InstallError extends Error {
  override name = 'InstallError';
}
