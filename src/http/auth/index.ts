/**
 * The security edge of the HTTP server: auth config, route patterns, token verification, the console guard, the
 * per-request access decision, user propagation, the request-header limit, and the protection-matrix oracle.
 * Pure modules: src/http/dispatch.ts and ws-upgrade.ts wire them into uWS.
 */
export {
  authConfigSchema,
  verifyOptionsSchema,
  resolveAuthConfig,
  describeAuth,
  importVerificationKey,
  algorithmsForKey,
  AuthConfigError,
  JWS_ALGORITHMS,
  type AuthConfig,
  type AuthEnv,
  type JwsAlgorithm,
  type MapUser,
  type ResolvedAuthConfig,
  type VerificationKey,
} from './config.js';
export {
  parsePattern,
  matchPattern,
  matchAny,
  splitPath,
  PatternError,
  PATTERN_METHODS,
  type CompiledPattern,
  type PatternMethod,
  type PatternSegment,
} from './patterns.js';
export {
  verifyBearer,
  verifyToken,
  bearerToken,
  AUTH_REQUIRED,
  TOKEN_EXPIRED,
  INVALID_AUTHENTICATION,
  invalidToken,
  loadJose,
  type VerifyResult,
} from './jwt.js';
export {
  checkConsoleAccess,
  constantTimeEqual,
  isProduction,
  queryValue,
  CONSOLE_ACCESS_REQUIRED,
  type ConsoleCheck,
  type GuardRequest,
  type QueryLike,
} from './console-guard.js';
export {
  decideAccess,
  authenticate,
  createAuthenticator,
  type AccessDecision,
  type AuthOutcome,
  type AuthRequest,
  type RouteAuthInfo,
} from './decide.js';
export { mergeUserIntoBody, type PropagationKind } from './propagate.js';
export {
  ensureHeaderLimit,
  checkHeaderSize,
  headerBlockBytes,
  HEADER_LIMIT_BYTES,
  UWS_SPLIT_HEAD_LIMIT_BYTES,
  HEADERS_TOO_LARGE,
} from './header-limit.js';
export {
  expectedStatusFor,
  specAuthClass,
  matrixAuthConfig,
  matrixProcessEnv,
  matrixCredentials,
  mintMatrixToken,
  MATRIX_MODES,
  MATRIX_TOKEN_KINDS,
  MATRIX_SECRET,
  MATRIX_AUDIENCE,
  MATRIX_ISSUER,
  MATRIX_CONSOLE_KEY,
  MATRIX_SUBJECT,
  type ExpectedOutcome,
  type MatrixEnv,
  type MatrixMode,
  type MatrixTokenKind,
} from './matrix.js';
