import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { cliBin } from '../run-cli.js';

/** The programs that read documents as people's tools do: one set for every package's tests. */
export {
  DOCX_READER_MISSING,
  docxText,
  PDF_READER_MISSING,
  pdfText,
} from '../../../exchange/test/support/document-text.js';

/** Runs `rxs` with its standard output going to `file` byte for byte; resolves with the exit code. */
export function runCliToFile(args: string[], file: string): Promise<number | null> {
  const fd = openSync(file, 'w');
  return new Promise((resolve) => {
    const child = spawn(cliBin, args, {
      env: { ...process.env, HOME: dirname(file), RXS_API_KEY: '' },
      stdio: ['ignore', fd, 'inherit'],
    });
    child.on('close', (code) => {
      closeSync(fd);
      resolve(code);
    });
  });
}
