/**
 * Path matching for the route table: a segment trie per method where static segments win over
 * `:param` segments (so `GET /workflows/executions` beats `GET /workflows/:id`), with backtracking.
 */
import type { HttpMethod, RouteDef } from '../contract/routes.js';

interface Node<T> {
  statics: Map<string, Node<T>>;
  param?: { name: string; node: Node<T> };
  value?: T;
}

const newNode = <T>(): Node<T> => ({ statics: new Map() });

export function splitPath(path: string): string[] {
  const parts = path.split('/');
  // leading '' from the initial slash; keep inner empties so `//x` does not match `/x`
  parts.shift();
  if (parts.length === 1 && parts[0] === '') return [];
  return parts;
}

/** A parameter's value from its raw path segment: percent-decoded, or as sent when that is not valid encoding. */
export function decodeParam(seg: string): string {
  if (!seg.includes('%')) return seg;
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

export class PathTrie<T> {
  private readonly root = newNode<T>();

  insert(pattern: string, value: T): void {
    let node = this.root;
    for (const seg of splitPath(pattern)) {
      if (seg.startsWith(':')) {
        const name = seg.slice(1);
        if (!node.param) node.param = { name, node: newNode<T>() };
        else if (node.param.name !== name) throw new Error(`Route ${pattern}: parameter :${name} conflicts with :${node.param.name}`);
        node = node.param.node;
      } else {
        let next = node.statics.get(seg);
        if (!next) node.statics.set(seg, (next = newNode<T>()));
        node = next;
      }
    }
    if (node.value !== undefined) throw new Error(`Route ${pattern} is registered twice`);
    node.value = value;
  }

  match(path: string): { value: T; params: Record<string, string> } | undefined {
    const segs = splitPath(path);
    const params: Record<string, string> = {};
    const value = this.walk(this.root, segs, 0, params);
    return value === undefined ? undefined : { value, params };
  }

  private walk(node: Node<T>, segs: string[], i: number, params: Record<string, string>): T | undefined {
    if (i === segs.length) return node.value;
    const seg = segs[i];
    const stat = node.statics.get(seg);
    if (stat) {
      const v = this.walk(stat, segs, i + 1, params);
      if (v !== undefined) return v;
    }
    if (node.param && seg !== '') {
      const decoded = decodeParam(seg);
      const v = this.walk(node.param.node, segs, i + 1, params);
      if (v !== undefined) {
        params[node.param.name] = decoded;
        return v;
      }
    }
    return undefined;
  }
}

/** Routes by method; built once from the route table. */
export class Router {
  private readonly tries = new Map<HttpMethod, PathTrie<RouteDef>>();

  constructor(routes: readonly RouteDef[]) {
    for (const r of routes) this.add(r);
  }

  /** Adds a route; a custom route with a built-in's method and path is never reached (docs/api-reference.md "Custom routes and CORS"), so it is skipped. */
  add(route: RouteDef): boolean {
    let trie = this.tries.get(route.method);
    if (!trie) this.tries.set(route.method, (trie = new PathTrie()));
    try {
      trie.insert(route.path, route);
      return true;
    } catch (err) {
      if (route.custom) return false;
      throw err;
    }
  }

  match(method: string, path: string): { route: RouteDef; params: Record<string, string> } | undefined {
    const trie = this.tries.get(method as HttpMethod);
    const m = trie?.match(path);
    return m ? { route: m.value, params: m.params } : undefined;
  }
}
