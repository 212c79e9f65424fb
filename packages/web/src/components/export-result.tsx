import { Notice } from './ui';

/** How a download went, and the values the format had to change (cut or converted), if any. */
export interface ExportResult {
  kind: 'success' | 'error';
  text: string;
  warnings?: string[];
}

export function ExportResultNotice({ result }: { result: ExportResult | undefined }) {
  if (!result) return null;
  return (
    <>
      <Notice kind={result.kind}>{result.text}</Notice>
      {result.warnings && result.warnings.length > 0 && (
        <Notice kind="warning" title="The export has warnings">
          <ul class="export-warnings">
            {result.warnings.map((warning, index) => (
              <li key={index}>{warning}</li>
            ))}
          </ul>
        </Notice>
      )}
    </>
  );
}
