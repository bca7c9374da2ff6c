import { HTML_PAGE_CSP, htmlPage } from '@holdfast/problem-details';

/** The server's HTML pages (`/docs`, `/problems`): a self-contained page titled `… · Holdfast`. */
export function page(title: string, body: string): string {
  return htmlPage(`${title} · Holdfast`, body);
}

/**
 * Every HTML response carries a Content-Security-Policy and cannot be framed (CONTRACT section
 * 11): pages of {@link page} get `HTML_PAGE_CSP`; a response that sets its own policy (the
 * dashboard's) keeps it. `X-Frame-Options` is for browsers that predate `frame-ancestors`.
 */
export function secureHtml(headers: Headers): void {
  if (!headers.get('Content-Type')?.toLowerCase().startsWith('text/html')) return;
  if (!headers.has('Content-Security-Policy')) headers.set('Content-Security-Policy', HTML_PAGE_CSP);
  headers.set('X-Frame-Options', 'DENY');
}
