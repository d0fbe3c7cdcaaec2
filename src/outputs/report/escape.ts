/** HTML escaping for text and attribute values. Pure. */
export function esc(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** A URL safe to put in href: http(s) only, so an annotation cannot plant `javascript:`. */
export function safeUrl(url: string | null | undefined): string | undefined {
  if (url === null || url === undefined) return undefined;
  return /^https?:\/\//i.test(url.trim()) ? url.trim() : undefined;
}
