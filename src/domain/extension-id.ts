/**
 * Our extension's id. The manifest pins it with the public key in extension/key.pub.b64
 * (Chrome derives the id from that key), so the server's default Origin allowlist can name it.
 */
export const EXTENSION_ID = 'pkpkhhbkobfcgmjenhmfgcphnfjiedej';
export const EXTENSION_ORIGIN = `chrome-extension://${EXTENSION_ID}`;
