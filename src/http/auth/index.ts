/**
 * The security edge of the HTTP server: auth config, route patterns, token verification, the console guard, the
 * per-request access decision, user propagation, the request-header limit, and the protection-matrix oracle.
 * Pure modules: src/http/dispatch.ts and ws-upgrade.ts wire them into uWS.
 */
export { resolveAuthConfig, describeAuth, type AuthConfig } from './config.js';
export { loadJose } from './jwt.js';
export { createAuthenticator } from './authorize.js';
export { matrixCredentials, MATRIX_SECRET } from './matrix.js';
