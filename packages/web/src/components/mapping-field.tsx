import { useState } from 'preact/hooks';

/**
 * A mapping file (docs/mapping.md), uploaded or pasted: need types, id prefixes, ReqIF types,
 * identifier rules and link names per pair of topics, as `rxs export --mapping` takes it.
 */
export function MappingField({
  value,
  onValue,
  purpose,
}: {
  value: string;
  onValue: (text: string) => void;
  /** What the mapping is for on this page, one sentence. */
  purpose: string;
}) {
  const [fileName, setFileName] = useState<string>();
  return (
    <fieldset class="panel">
      <legend class="panel-title">Mapping file (optional)</legend>
      <p class="muted">{purpose} Upload the file or paste its JSON.</p>
      <label class="field">
        <span>Upload</span>
        <input
          type="file"
          accept=".json,.jsonc,application/json"
          onChange={async (e) => {
            const file = e.currentTarget.files?.[0];
            if (!file) return;
            onValue(await file.text());
            setFileName(file.name);
          }}
        />
      </label>
      <label class="field">
        <span>{fileName ? `Mapping (${fileName})` : 'Mapping'}</span>
        <textarea
          name="mapping"
          rows={6}
          spellcheck={false}
          placeholder='{"topics": [{"name": "Verification Tests", "needType": "test", "idPrefix": "TC"}]}'
          value={value}
          onInput={(e) => {
            onValue(e.currentTarget.value);
            setFileName(undefined);
          }}
        />
      </label>
    </fieldset>
  );
}
