// @ts-check
/**
 * @typedef {import('./values.js').Json} Json
 * @typedef {import('./dom.js').Child} Child
 */

import { api, asPage, PAGE_SIZE } from './api.js';
import { errorBox } from './components.js';
import { announce, h } from './dom.js';
import { str } from './values.js';

/**
 * @typedef {{ label: string, cell: (row: Json) => Child | Child[], className?: string }} Column
 */

/**
 * A table over a cursor-paginated list: fetches the first page, then "Load more" appends the next
 * one with `cursor=<pageInfo.nextCursor>` and the same filters (a cursor is bound to them).
 *
 * Between phone and laptop widths (an 800 px iframe, say) the rows are cards (app.css, by width);
 * with `cards`, at every width above a phone's.
 *
 * @param {{ path: string, query?: Record<string, string | undefined>, columns: Column[], caption: string,
 *   empty: string, rowKey?: (row: Json) => string | undefined, cards?: boolean }} options
 */
export function pagedTable(options) {
  const { tbody, table, status, errorSlot, more, element } = tableShell(options);
  /** @param {Json} row */
  const renderRow = (row) => tableRow(options, row);
  /** @type {string | null} */
  let cursor = null;
  let count = 0;
  let generation = 0;

  /** @param {boolean} reset */
  const load = async (reset) => {
    const mine = reset ? ++generation : generation;
    if (reset) {
      cursor = null;
      count = 0;
    }
    more.disabled = true;
    status.textContent = 'Loading…';
    errorSlot.replaceChildren();
    try {
      const { data } = await api(options.path, {
        query: { ...options.query, limit: String(PAGE_SIZE), ...(cursor === null ? {} : { cursor }) },
      });
      if (mine !== generation) return;
      const page = asPage(data);
      if (reset) tbody.replaceChildren();
      for (const row of page.data) tbody.append(renderRow(row));
      count += page.data.length;
      cursor = page.pageInfo.nextCursor;
      more.hidden = !page.pageInfo.hasMore;
      status.textContent =
        count === 0 ? options.empty : `Showing ${count}${page.pageInfo.hasMore ? ', more available' : ''}.`;
      table.hidden = count === 0;
      if (!reset) announce(`Loaded ${page.data.length} more. Showing ${count}.`);
    } catch (error) {
      if (mine !== generation) return;
      status.textContent = '';
      errorSlot.replaceChildren(errorBox(error, { retry: () => void load(reset) }));
    } finally {
      if (mine === generation) more.disabled = false;
    }
  };
  more.addEventListener('click', () => void load(false));
  table.hidden = true;
  void load(true);

  return {
    element,
    reload: () => load(true),
    /**
     * @param {string} id
     * @param {Json | null} row the new row, or null to remove it
     */
    replace(id, row) {
      for (const tr of tbody.querySelectorAll('tr')) {
        if (tr.dataset.id !== id) continue;
        if (row === null) {
          tr.remove();
          count -= 1;
          status.textContent = count === 0 ? options.empty : `Showing ${count}.`;
          table.hidden = count === 0;
        } else {
          tr.replaceWith(renderRow(row));
        }
      }
    },
  };
}

/**
 * The table, its footer (status and "Load more") and the frame around them, without rows.
 * @param {{ columns: Column[], caption: string, cards?: boolean }} options
 */
function tableShell(options) {
  const tbody = h('tbody', {});
  const table = h(
    'table',
    { class: 'data', role: 'table' },
    h('caption', { class: 'visually-hidden' }, options.caption),
    h(
      'thead',
      {},
      h(
        'tr',
        { role: 'row' },
        options.columns.map((c) => h('th', { scope: 'col', role: 'columnheader' }, c.label)),
      ),
    ),
    tbody,
  );
  const status = h('p', { class: 'list-status muted' });
  const errorSlot = h('div', {});
  const more = h('button', { type: 'button', class: 'button secondary', hidden: true }, 'Load more');
  const element = h(
    'div',
    { class: 'table-wrap' },
    errorSlot,
    table,
    h('div', { class: 'list-footer' }, status, more),
  );
  if (options.cards === true) element.classList.add('cards');
  return { tbody, table, status, errorSlot, more, element };
}

/**
 * @param {{ columns: Column[], rowKey?: (row: Json) => string | undefined }} options
 * @param {Json} row
 */
function tableRow(options, row) {
  return h(
    'tr',
    { role: 'row', 'data-id': options.rowKey?.(row) ?? str(row.id) },
    options.columns.map((c) =>
      h(
        'td',
        { role: 'cell', 'data-label': c.label, class: c.className },
        h('div', { class: 'cell' }, c.cell(row)),
      ),
    ),
  );
}
