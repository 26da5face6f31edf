/**
 * Characters a name shown in a log line, a terminal or a page must not carry: C0 and C1 controls
 * (newlines and escapes forge log lines and repaint terminals), the line and paragraph separators,
 * and the bidirectional overrides and isolates (they make a name read as another).
 */
const CONTROL_CHARACTERS = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

export const hasControlCharacters = (value: string): boolean => CONTROL_CHARACTERS.test(value);
