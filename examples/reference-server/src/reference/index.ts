export { escapeHtml, htmlPage } from './html';
export {
  type Json,
  type OpenApiDocument,
  type ReferenceOptions,
  type ReferenceSection,
  renderReference,
} from './reference';
