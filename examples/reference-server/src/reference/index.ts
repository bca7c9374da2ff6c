export { escapeHtml, HTML_PAGE_CSP, htmlPage } from './html';
export {
  type Json,
  type OpenApiDocument,
  type ReferenceOptions,
  type ReferenceSection,
  renderReference,
} from './reference';
