/**
 * Strings kept for long in bounded stores. V8 builds a `JSON.stringify` result longer than a few dozen
 * characters as a rope (a cons string of its parts); it stays one until something reads a character
 * of it. A rope of ~150 characters took ~270 bytes of heap where the flat string takes ~180, so a
 * store that keeps tens of thousands of JSON texts flattens each once, when it keeps it.
 */

/** `text`, flattened in place (reading one character makes V8 flatten a rope); the same string value. */
export function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}
