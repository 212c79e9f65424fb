export * from './model.js';
export { renderDocx } from './docx.js';
export { renderPdf } from './pdf.js';
export * from './from-export.js';
