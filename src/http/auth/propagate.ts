/**
 * User propagation (docs/api-reference.md "The user in requests"): an authenticated user is merged into the request body of agent, workflow
 * and tool calls, so the agent sees `context.user` and memory is scoped to the token's identity, not to a userId
 * the client picked. Bodies are merged, never replaced; the input is never mutated.
 */
import { userIdentity, type AuthUser } from '../../contract/routes.js';

export type PropagationKind = 'agent' | 'workflow' | 'tool';

type Obj = Record<string, unknown>;
const isPlainObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Returns a new body with the user merged in:
 * - agent: `options.context.user`, `options.memory.userId` and `options.userId` = identity;
 * - workflow: `options.context.user`, `options.userId` = identity;
 * - tool: `context.user`, `userId` = identity.
 * A container that is present but not an object (`options: "x"`) is left as sent, so request validation reports
 * it instead of this function papering over it. Without a user, or for a non-object body, the body is returned as is.
 */
export function mergeUserIntoBody<T>(kind: PropagationKind, body: T, user: AuthUser | undefined): T {
  if (!user) return body;
  if (body !== undefined && body !== null && !isPlainObject(body)) return body;
  const base: Obj = isPlainObject(body) ? body : {};
  const id = userIdentity(user);

  if (kind === 'tool') {
    const context = mergeInto(base.context, { user });
    if (context === undefined) return { ...base } as T;
    return { ...base, context, ...(id !== undefined ? { userId: id } : {}) } as T;
  }

  if (base.options !== undefined && !isPlainObject(base.options)) return { ...base } as T;
  const options: Obj = { ...(base.options ?? {}) };
  const context = mergeInto(options.context, { user });
  if (context === undefined) return { ...base } as T;
  options.context = context;
  if (id !== undefined) {
    options.userId = id;
    if (kind === 'agent') {
      const memory = mergeInto(options.memory, { userId: id });
      if (memory === undefined) return { ...base } as T;
      options.memory = memory;
    }
  }
  return { ...base, options } as T;
}

/** `{...existing, ...add}`; undefined when `existing` is set but not an object (left for validation to reject). */
function mergeInto(existing: unknown, add: Obj): Obj | undefined {
  if (existing === undefined || existing === null) return { ...add };
  if (!isPlainObject(existing)) return undefined;
  return { ...existing, ...add };
}
