/**
 * A client id: what `--client-id` and the `x-gasoline-client` header may carry. Ids are file names
 * under the state dir and keys in /health: short and inert. A module of its own, without crypto or
 * files, because a bridge checks its option against it before it has answered initialize.
 */
export const CLIENT_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
