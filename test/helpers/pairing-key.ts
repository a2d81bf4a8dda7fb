/**
 * Every test server starts paired with this secret (preseeded in its state dir, as a user's earlier
 * `gasoline pair` would have left it): a test producer that passes it to `hello({key})`, and the
 * e2e extension that gets it in config.json (`pairingKey`), prove pairing; any other producer is
 * unverified. Kept free of imports so the Chromium launcher can take it without the server.
 */
export const TEST_PAIRING_KEY = 'a5'.repeat(32);
