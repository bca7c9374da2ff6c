import { htmlPage } from './reference/index';

/** The server's HTML pages (`/docs`, `/problems`): a self-contained page titled `… · Holdfast`. */
export function page(title: string, body: string): string {
  return htmlPage(`${title} · Holdfast`, body);
}
