import { useEffect, useRef, useState } from 'preact/hooks';
import type { FormSchema } from '@rxs/web-api';
import { ErrorNotice, Loading } from '../components/ui';

type Editor = InstanceType<(typeof import('./editor'))['FormEditor']>;

export interface DesignerHandle {
  /** The schema as designed now. */
  schema(): FormSchema;
  /** Replaces the design (an imported JSON schema). */
  load(schema: FormSchema): Promise<void>;
}

/** The bpmn.io form-js editor: palette, canvas and properties panel. */
export function FormDesigner({
  schema,
  onReady,
  onChange,
}: {
  schema: FormSchema;
  onReady: (handle: DesignerHandle) => void;
  onChange: () => void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<{ loading: boolean; error?: unknown }>({ loading: true });
  const callbacks = useRef({ onReady, onChange });
  callbacks.current = { onReady, onChange };

  useEffect(() => {
    let editor: Editor | undefined;
    let disposed = false;
    // Imports emit 'changed' as well; only edits made afterwards make the design dirty.
    let importing = true;
    import('./editor')
      .then(async ({ FormEditor }) => {
        if (disposed || !container.current) return;
        editor = new FormEditor({
          container: container.current,
          exporter: { name: 'RXS', version: '0.1.0' },
        });
        const instance = editor;
        instance.on('changed', () => {
          if (!importing) callbacks.current.onChange();
        });
        await instance.importSchema(withDefaults(schema));
        importing = false;
        if (disposed) return;
        setState({ loading: false });
        callbacks.current.onReady({
          schema: () => instance.saveSchema() as FormSchema,
          async load(next) {
            importing = true;
            try {
              await instance.importSchema(withDefaults(next));
            } finally {
              importing = false;
            }
            callbacks.current.onChange();
          },
        });
      })
      .catch((error: unknown) => !disposed && setState({ loading: false, error }));
    return () => {
      disposed = true;
      editor?.destroy();
    };
    // Built once per mount; the page remounts it for another revision.
  }, []);

  return (
    <div class="designer">
      {state.loading && <Loading label="Loading the form editor…" />}
      {state.error !== undefined && <ErrorNotice error={state.error} />}
      <div ref={container} class="designer-host" />
    </div>
  );
}

/** form-js expects a `type` on the root; schemas from other tools may lack it. */
function withDefaults(schema: FormSchema): FormSchema {
  return { type: 'default', ...schema, components: schema.components ?? [] };
}
