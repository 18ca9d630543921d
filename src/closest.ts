/** "Did you mean" hints (`opn` -> `open`, `policy` -> `policyName`). */

/** Levenshtein distance. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitute = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitute));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The known word closest to `typed`, case-insensitive (a prefix either way is close); undefined if none is. */
export function findClosest(typed: string, known: readonly string[]): string | undefined {
  const t = typed.toLowerCase();
  let best: { word: string; distance: number } | undefined;
  for (const word of known) {
    const w = word.toLowerCase();
    const distance = w.startsWith(t) || t.startsWith(w) ? 1 : editDistance(t, w);
    const limit = Math.max(2, Math.floor(Math.max(t.length, w.length) / 3));
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { word, distance };
  }
  return best?.word;
}
