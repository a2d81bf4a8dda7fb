/**
 * Stands in for the MCP SDK's ajv validator in the extension bundle (build.mjs, plugin no-ajv).
 * The panel always passes its own validator, so this is never constructed; if a future caller
 * forgets, it fails loudly instead of hitting the page CSP's ban on `new Function`.
 */
export class AjvJsonSchemaValidator {
  constructor() {
    throw new Error('the extension bundle carries no ajv: pass jsonSchemaValidator to the MCP Client');
  }
}
