/**
 * Whether a parsed JSON value nests arrays and objects deeper than `max` levels (the value
 * itself is level 1). Iterative, so it is safe at any depth; check untrusted JSON with it before
 * anything walks the value recursively (`JSON.stringify`, a validator, a canonical form), which
 * a deep enough value would crash with a stack overflow. `jsonBody()` uses it (`maxDepth`).
 *
 * @example
 * ```ts
 * nestedDeeperThan({ a: [1] }, 2); // false
 * nestedDeeperThan(JSON.parse('[[[[]]]]'), 3); // true
 * ```
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: [unknown, number][] = [[value, 1]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, depth] = top;
    if (depth > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node as object);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
