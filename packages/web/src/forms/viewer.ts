// Loaded on demand: form-js and its styles are a chunk of their own, fetched by the record pages.
import '@bpmn-io/form-js-viewer/dist/assets/form-js.css';

export { Form } from '@bpmn-io/form-js-viewer';
