/** The site icon: an anchor on the dashboard's blue, as SVG (every current browser takes it). */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b57a4"/><path d="M16 6v20M10 11h12M7 18c1 5 5 8 9 8s8-3 9-8" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/><circle cx="16" cy="6" r="2.5" fill="none" stroke="#fff" stroke-width="2"/></svg>';

/** `GET /favicon.ico`: the icon browsers ask every page for, rather than a 404 in every log. */
export function favicon(): Response {
  return new Response(FAVICON_SVG, {
    headers: {
      'Content-Type': 'image/svg+xml',
      'Cache-Control': 'public, max-age=86400',
      'X-Content-Type-Options': 'nosniff',
    },
  });
}
