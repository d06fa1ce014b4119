/**
 * True when the JSON text nests objects/arrays deeper than `maxDepth`. A linear scan that
 * skips string contents, so it never recurses and stops at the first level too deep.
 */
export function exceedsJsonDepth(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const character = text.charCodeAt(index);
    if (inString) {
      if (character === 0x5c /* \ */) index++;
      else if (character === 0x22 /* " */) inString = false;
    } else if (character === 0x22) {
      inString = true;
    } else if (character === 0x7b /* { */ || character === 0x5b /* [ */) {
      depth++;
      if (depth > maxDepth) return true;
    } else if (character === 0x7d /* } */ || character === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}
