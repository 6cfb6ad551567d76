// A Prometheus text exposition read back as the tests compare it: every sample by its series.

/** `name{labels}` -> value, for every sample of a text exposition (comments and blank lines skipped). */
export function samples(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    found.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return found;
}
