/**
 * The process's exit codes, in a module of their own so that the command line and the wiring
 * both read them without importing each other.
 */
export const EXIT = { ok: 0, fatal: 1, config: 2, portTaken: 3, stateDir: 4, noDaemon: 5 } as const;
