import { useEffect, useRef, useState } from 'preact/hooks';
import type { FormSchema, ValidationErrorItem } from '@rxs/web-api';
import { ErrorNotice, Loading } from '../components/ui';
import { placeServerErrors, type FieldInstance } from './field-errors';
import { inServerWords } from './server-voice';

type FormJs = InstanceType<(typeof import('./viewer'))['Form']>;

/** What a page does with a rendered form. */
export interface FormHandle {
  /** The entered data (form-js also marks its own findings on the fields). */
  collect(): Record<string, unknown>;
  /** Puts the server's 422 items on their fields; returns those that fit no field. */
  showServerErrors(items: readonly ValidationErrorItem[]): ValidationErrorItem[];
  clearErrors(): void;
}

/**
 * A knowledge topic's form, rendered by form-js: read-only to show a record, editable to create or
 * edit one. The schema and data are read once per mount; give the component a new `key` to reset.
 */
export function FormView({
  schema,
  data,
  readOnly = false,
  onReady,
  onSubmitRequest,
}: {
  schema: FormSchema;
  data?: Record<string, unknown>;
  readOnly?: boolean;
  onReady?: (handle: FormHandle) => void;
  /** A submit button designed into the form was pressed. */
  onSubmitRequest?: () => void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<{ loading: boolean; error?: unknown }>({ loading: true });
  const callbacks = useRef({ onReady, onSubmitRequest });
  callbacks.current = { onReady, onSubmitRequest };

  useEffect(() => {
    let form: FormJs | undefined;
    let disposed = false;
    // form.submit() inside collect() emits 'submit' too; only a press inside the form should count.
    let collecting = false;
    import('./viewer')
      .then(async ({ Form }) => {
        if (disposed || !container.current) return;
        // No debounce: form-js otherwise applies typing 300 ms late (or when the field loses the
        // focus), and a Save pressed right after typing would send the value from before.
        // (`debounce` is read from the options by form-js's config service; its types leave it out.)
        const options = { container: container.current, properties: { readOnly }, debounce: false };
        form = new Form(options);
        await form.importSchema(schema, data ?? {});
        if (disposed) return;
        const instance = form;
        speakWithTheServersVoice(instance);
        instance.on('submit', () => {
          if (!collecting) callbacks.current.onSubmitRequest?.();
        });
        setState({ loading: false });
        callbacks.current.onReady?.({
          collect() {
            collecting = true;
            try {
              return instance.submit().data as Record<string, unknown>;
            } finally {
              collecting = false;
            }
          },
          showServerErrors(items) {
            const registry = instance.get<{ getAllKeyed(): FieldInstance[] }>('formFieldInstanceRegistry');
            const placed = placeServerErrors(items, registry.getAllKeyed());
            instance._setState({ errors: placed.errors });
            // Bring the first marked field into view, as a person would look for it.
            requestAnimationFrame(() => {
              const first = container.current?.querySelector<HTMLElement>('.fjs-has-errors');
              first?.scrollIntoView({ block: 'center', behavior: 'smooth' });
              first
                ?.querySelector<HTMLElement>('input, textarea, select, [tabindex]')
                ?.focus({ preventScroll: true });
            });
            return placed.unplaced;
          },
          clearErrors() {
            instance._setState({ errors: {} });
          },
        });
      })
      .catch((error: unknown) => !disposed && setState({ loading: false, error }));
    return () => {
      disposed = true;
      form?.destroy();
    };
    // The form is built once per mount; callers remount it (key) for another schema or data.
  }, []);

  return (
    <div class="form-view">
      {state.loading && <Loading label="Loading the form…" />}
      {state.error !== undefined && <ErrorNotice error={state.error} />}
      {schema.components.length === 0 && !state.loading && (
        <p class="muted">This topic's form has no fields yet.</p>
      )}
      <div ref={container} class={readOnly ? 'form-js-host form-js-readonly' : 'form-js-host'} />
    </div>
  );
}

/** form-js's field checks, reworded as the service words the same rules (server-voice.ts). */
function speakWithTheServersVoice(form: { get<T>(name: string): T }): void {
  type Check = (fieldInstance: { id: string }, value: unknown) => string[];
  const validator = form.get<{ validateFieldInstance: Check }>('validator');
  const fields = form.get<{ get(id: string): { key?: string; label?: string; type?: string } | undefined }>(
    'formFieldRegistry',
  );
  const check = validator.validateFieldInstance.bind(validator);
  validator.validateFieldInstance = (fieldInstance, value) => {
    const field = fields.get(fieldInstance.id);
    const messages = check(fieldInstance, value);
    return field ? messages.map((message) => inServerWords(field, value, message)) : messages;
  };
}
