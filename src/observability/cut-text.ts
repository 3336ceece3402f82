/**
 * Cutting long text for bounded stores. `s.slice(0, n)` in V8 is a view that keeps the whole of `s`
 * alive, so a store of "cut" values would still hold every original; the cut is copied out instead.
 */
export function cutText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // a UTF-16 round trip makes a fresh flat string that owns its characters (lone surrogates kept)
  return `${Buffer.from(text.slice(0, maxChars), 'utf16le').toString('utf16le')}…`;
}
