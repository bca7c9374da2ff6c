import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { holdfastDefinitions } from '../src/catalogue';
import { onProblem, problemPages } from '../src/hono';

const app = new Hono();
app.onError(onProblem());
app.route(
  '/problems',
  problemPages({
    definitions: holdfastDefinitions,
    advice: { not_found: 'Check the `id`.', forbidden: 'Ask for <the> scope.' },
  }),
);

describe('problemPages', () => {
  it('lists every code with advice, with its status and title', async () => {
    const page = await (await app.request('/problems')).text();
    expect(page).toContain('<a href="/problems/not_found"><code>not_found</code></a></td><td>404</td>');
    expect(page).toContain('/problems/forbidden');
    expect(page).not.toContain('/problems/internal_error');
  });

  it('gives each code a page with its advice (escaped, backticks as code) and type URI', async () => {
    const response = await app.request('/problems/forbidden');
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain('Ask for &lt;the&gt; scope.');
    expect(page).toContain('Type URI: <code>/problems/forbidden</code>');
    expect(await (await app.request('/problems/not_found')).text()).toContain('Check the <code>id</code>.');
  });

  it('answers 404 not_found for a code without a page, and for Object.prototype names', async () => {
    for (const code of ['internal_error', 'nonsense', 'constructor', '__proto__']) {
      const response = await app.request(`/problems/${code}`);
      expect(response.status).toBe(404);
      expect((await response.json()).code).toBe('not_found');
    }
  });
});
