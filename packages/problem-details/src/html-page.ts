/**
 * Escapes text for HTML element content and attribute values.
 *
 * @example
 * ```ts
 * escapeHtml('<a href="x">'); // '&lt;a href=&quot;x&quot;&gt;'
 * ```
 */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

// The page's one stylesheet, inline so that a page is one response; HTML_PAGE_CSP allows it by
// its hash, so no other inline style or script can run.
const PAGE_STYLE = `
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1f24;background:#fff}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
pre{background:#f3f4f6;padding:.75rem;overflow:auto;border-radius:6px}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #d0d7de;padding:.35rem .5rem;text-align:left;vertical-align:top}
a{color:#0a58ca}h2{margin-top:2.5rem;border-bottom:1px solid #d0d7de}
.method{display:inline-block;min-width:4.5rem;font-weight:700}
.op{margin:1.5rem 0;padding:1rem;border:1px solid #d0d7de;border-radius:8px}
nav>ul{columns:2;column-gap:2rem}nav>ul>li{break-inside:avoid}nav ul ul{columns:auto;padding-left:1.25rem}nav code{overflow-wrap:anywhere}
@media (max-width:40rem){nav>ul{columns:auto}}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}pre{background:#161b22}a{color:#58a6ff}td,th,.op,h2{border-color:#30363d}}
`;

/**
 * The `Content-Security-Policy` for pages of {@link htmlPage}: nothing loads or runs but the
 * page's own inline stylesheet (by its SHA-256, CSP Level 3 section 8.3), no `<base>`, no form
 * posts, and no framing (`frame-ancestors 'none'`, against clickjacking). Send it, with
 * `X-Frame-Options: DENY` for older browsers, on every response carrying such a page.
 *
 * @example
 * ```ts
 * new Response(htmlPage('Docs', '<h1>Docs</h1>'), {
 *   headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': HTML_PAGE_CSP },
 * });
 * ```
 */
export const HTML_PAGE_CSP: string = [
  "default-src 'none'",
  "style-src 'sha256-iRnVmFapsa4I+1fSMjXTctKjRE13HcsBeWrXNotmY9Y='",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * A self-contained HTML page (no external CSS, fonts or scripts; one inline `<style>`), light
 * and dark, that {@link HTML_PAGE_CSP} allows. `title` is escaped; `body` is HTML, placed in `<main>`.
 *
 * @example
 * ```ts
 * htmlPage('Problem types', '<h1>Problem types</h1>');
 * ```
 */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style></head><body><main>${body}</main></body></html>`;
}
