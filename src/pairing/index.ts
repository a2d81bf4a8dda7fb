/** Pairing (docs/SECURITY.md): the secret, the per-connection proofs, the short-code exchange. */
export { Pairing, type Challenge, type PairingOptions, type Refusal, type UnpairedPolicy, type WindowInfo } from './service.js';
export { readSecret, secretPath, newSecret } from './secret.js';
export { producerProof, serverProof, nonce } from './proof.js';
export * from './spec.js';
export { PanelTokens, PANEL_TOKEN_TTL_MS, PANEL_TOKENS_PER_CONNECTION, type PanelGrant, type RevokeReason } from './panel-tokens.js';
