// Loaded on demand: the form-js editor (with its properties panel) is fetched by the design page only.
import '@bpmn-io/form-js-viewer/dist/assets/form-js.css';
import '@bpmn-io/form-js-editor/dist/assets/form-js-editor.css';

export { FormEditor } from '@bpmn-io/form-js-editor';
